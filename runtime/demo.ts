import type { Database } from '../db/database';
import { createApiKey } from '../domain/identity/api-keys';
import { createOrganization, type Organization } from '../domain/identity/organizations';
import { createPersonalToken, createUser } from '../domain/identity/people';

export interface DemoOrganization {
  organization: Organization;
  readWriteToken: string;
  readOnlyToken: string;
  reviewer: { email: string; token: string };
}

/** What a first `gatehouse dev` creates, so a newcomer can make a gated write at once. */
export async function createDemoOrganization(db: Database): Promise<DemoOrganization> {
  const organization = await createOrganization(db, { slug: 'demo', name: 'Demo Company', plan: 'business', timezone: 'UTC' });
  const readWrite = await createApiKey(db, { orgId: organization.id, label: 'Demo agent (read-write)', access: 'read_write' });
  const readOnly = await createApiKey(db, { orgId: organization.id, label: 'Demo script (read-only)', access: 'read' });
  const reviewer = await createUser(db, { orgId: organization.id, email: 'reviewer@demo.example', name: 'Demo Reviewer', role: 'reviewer' });
  const personal = await createPersonalToken(db, reviewer);
  return {
    organization,
    readWriteToken: readWrite.token,
    readOnlyToken: readOnly.token,
    reviewer: { email: reviewer.email, token: personal.token },
  };
}
