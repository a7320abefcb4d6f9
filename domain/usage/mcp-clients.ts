import type { Queryable } from '../../db/database';

/** An MCP client as its initialize names itself (clientInfo), and when its key first initialized with it. */
export interface McpClient {
  name: string;
  version: string;
  first_seen_at: string;
  last_seen_at: string;
}

/** Names and versions are the client's own words: kept to a length a card shows. */
const shortened = (value: string) => value.slice(0, 200);

/**
 * Notes the client a key initializes with (once per name and version, its last time kept). Clients not seen for
 * 90 days are let go as the key initializes again, so a key that changes versions often keeps a short list.
 */
export async function noteMcpClient(db: Queryable, orgId: string, apiKeyId: string, client: { name: string; version: string }): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM mcp_clients WHERE org_id = $1 AND api_key_id = $2 AND last_seen_at < now() - interval '90 days')
     INSERT INTO mcp_clients (org_id, api_key_id, name, version) VALUES ($1, $2, $3, $4)
     ON CONFLICT (api_key_id, name, version) DO UPDATE SET last_seen_at = now()`,
    [orgId, apiKeyId, shortened(client.name), shortened(client.version)],
  );
}

/** The client the key initialized with last before `at` (the one it most likely made a write with then); null if none. */
export async function mcpClientBefore(db: Queryable, orgId: string, apiKeyId: string, at: string): Promise<McpClient | null> {
  const { rows } = await db.query(
    `SELECT name, version, first_seen_at, last_seen_at FROM mcp_clients
     WHERE org_id = $1 AND api_key_id = $2 AND first_seen_at <= $3::timestamptz
     ORDER BY least(last_seen_at, $3::timestamptz) DESC, first_seen_at DESC LIMIT 1`,
    [orgId, apiKeyId, at],
  );
  const row = rows[0];
  return row
    ? { name: row.name, version: row.version, first_seen_at: (row.first_seen_at as Date).toISOString(), last_seen_at: (row.last_seen_at as Date).toISOString() }
    : null;
}
