import type { Database } from '../db/database';
import { createApiKey } from '../domain/identity/api-keys';
import { createOrganization, type Organization } from '../domain/identity/organizations';
import { passwordLinkUrl } from '../domain/identity/password-links';
import { cliManager, createPersonalToken, invitePerson } from '../domain/identity/people';

export interface DemoPerson {
  email: string;
  role: string;
  /** The one-time link to set their password, shown once. */
  setPasswordUrl: string;
  linkExpiresAt: string;
}

export interface DemoOrganization {
  organization: Organization;
  readWriteToken: string;
  readOnlyToken: string;
  owner: DemoPerson;
  reviewer: DemoPerson & { token: string };
}

/** What a first `gatehouse dev` creates, so a newcomer can make a gated write, and review it, at once. */
export async function createDemoOrganization(db: Database, publicUrl: string): Promise<DemoOrganization> {
  const organization = await createOrganization(db, { slug: 'demo', name: 'Demo Company', plan: 'business', timezone: 'UTC' });
  const readWrite = await createApiKey(db, { orgId: organization.id, label: 'Demo agent (read-write)', access: 'read_write' });
  const readOnly = await createApiKey(db, { orgId: organization.id, label: 'Demo script (read-only)', access: 'read' });
  const owner = await invitePerson(db, { orgId: organization.id, email: 'owner@demo.example', name: 'Demo Owner', role: 'owner' }, cliManager);
  const reviewer = await invitePerson(db, { orgId: organization.id, email: 'reviewer@demo.example', name: 'Demo Reviewer', role: 'reviewer' }, cliManager);
  const personal = await createPersonalToken(db, reviewer.user);
  const shown = (person: typeof owner): DemoPerson => ({
    email: person.user.email,
    role: person.user.role,
    setPasswordUrl: passwordLinkUrl(publicUrl, person.link),
    linkExpiresAt: person.link.expiresAt,
  });
  return {
    organization,
    readWriteToken: readWrite.token,
    readOnlyToken: readOnly.token,
    owner: shown(owner),
    reviewer: { ...shown(reviewer), token: personal.token },
  };
}
