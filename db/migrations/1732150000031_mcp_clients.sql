-- Up Migration

-- The MCP clients each key connects with, by the name and version their initialize names (clientInfo): MCP here is
-- stateless, so a tool call does not say which client made it; a held write's card names the client its key
-- initialized with last before the hold.
CREATE TABLE mcp_clients (
  org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  api_key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  name text NOT NULL,
  version text NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (api_key_id, name, version)
);

CREATE INDEX mcp_clients_by_key_seen ON mcp_clients (org_id, api_key_id, first_seen_at);

-- Down Migration

DROP TABLE mcp_clients;
