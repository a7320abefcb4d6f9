-- Up Migration

-- One row per authenticated call of a catalog operation or MCP tool, written after the answer has gone
-- out: what each key (or person) is doing, through which interface, how it ended and how long it took.
CREATE TABLE activity_log (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id),
  api_key_id  text REFERENCES api_keys(id),
  user_id     text REFERENCES users(id),
  interface   text NOT NULL CHECK (interface IN ('rest', 'mcp')),
  -- The catalog operation (tasks.create), or the MCP tool for tools that are not catalog operations.
  operation   text NOT NULL,
  tool        text,
  -- The HTTP status for REST; for MCP tool calls 200, or the status of the error the tool answered.
  status      integer NOT NULL,
  -- ok, applied, pending_review, policy_denied, or the error code.
  outcome     text NOT NULL,
  latency_ms  double precision NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
-- id breaks ties between rows of the same instant, for stable pages.
CREATE INDEX activity_log_org ON activity_log (org_id, created_at DESC, id DESC);
CREATE INDEX activity_log_org_key ON activity_log (org_id, api_key_id, created_at DESC, id DESC);

-- Down Migration

DROP TABLE activity_log;
