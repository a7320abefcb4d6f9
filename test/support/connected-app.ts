import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/database';
import type { ApiKey } from '../../domain/identity/api-keys';
import { connectClient } from '../../domain/identity/oauth-connections';
import { oauthRecords } from '../../domain/identity/oauth-records';

// An app connected over OAuth without the browser's round trip (test/mcp/mcp-oauth.test.ts makes that journey): the
// consent recorded as the consent page records it (connectClient), and an access token for the REST API stored as
// the authorization server stores one, so that the app calls the real api with a Bearer token like any connected
// app. For tests of what follows a connection (notifications, reviews), not of the connection itself.

export interface ConnectedApp {
  key: ApiKey;
  /** An access token for the REST API (`publicUrl`/api), good for an hour. */
  token: string;
}

export async function connectAppDirectly(
  db: Database,
  input: { orgId: string; personId: string; name: string; publicUrl: string; abilities?: string[] },
): Promise<ConnectedApp> {
  const abilities = input.abilities ?? ['tasks.read', 'tasks.write'];
  const grantId = randomBytes(16).toString('hex');
  const key = await connectClient(db, {
    orgId: input.orgId,
    personId: input.personId,
    client: { id: `https://app-${grantId}.example/client.json`, name: input.name, uri: null, identifiedBy: 'metadata_document' },
    grantId,
    consentUid: randomBytes(16).toString('base64url'),
    choice: { access: 'read_write', abilities, lastsDays: 30 },
    requested: abilities,
  });
  // Opaque, as the library's are (never `gate_…`, which reads as one of ours).
  const token = `t${randomBytes(32).toString('base64url')}`;
  await oauthRecords(db, 'AccessToken').upsert(token, { grantId, aud: `${input.publicUrl}/api`, scope: abilities.join(' '), clientId: key.connection!.clientId }, 3600);
  return { key, token };
}
