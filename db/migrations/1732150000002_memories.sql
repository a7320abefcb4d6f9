-- Up Migration

-- What agents remember: short notes an API key keeps across conversations. Each belongs to the key that
-- wrote it as well as to the organization; another key of the same organization never sees it.
CREATE TABLE agent_memories (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id),
  api_key_id  text NOT NULL REFERENCES api_keys(id),
  content     text NOT NULL,
  tags        text[] NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  version     integer NOT NULL DEFAULT 1
);
CREATE INDEX agent_memories_org_key ON agent_memories (org_id, api_key_id, id);

-- Down Migration

DROP TABLE agent_memories;
