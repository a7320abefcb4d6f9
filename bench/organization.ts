import { readFileSync } from 'node:fs';
import { connectDatabase } from '../db/database';
import { createApiKey } from '../domain/api-keys';
import { createOrganization } from '../domain/organizations';
import { setPolicySet } from '../domain/policies';

/** The title decides: "review…" → Review, "deny…" → Deny, anything else → Allow. */
export const benchPolicy = readFileSync(new URL('../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

export interface BenchOrganization {
  orgId: string;
  slug: string;
  token: string;
}

/** An organization with the bench policy and a read-write API key, made through the domain functions. */
export async function createBenchOrganization(databaseUrl: string): Promise<BenchOrganization> {
  const db = connectDatabase(databaseUrl, { maxConnections: 2 });
  try {
    const organization = await createOrganization(db, { slug: `bench-${Date.now().toString(36)}`, name: 'Benchmark' });
    await setPolicySet(db, organization.id, benchPolicy, 'bench');
    const { token } = await createApiKey(db, { orgId: organization.id, label: 'bench agent', access: 'read_write' });
    return { orgId: organization.id, slug: organization.slug, token };
  } finally {
    await db.close();
  }
}
