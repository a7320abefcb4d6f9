-- Up Migration

-- Gated writes an agent ran as MCP tasks (the 2025-11-25 specification's task-augmented tools/call). A task
-- belongs to the organization and to the API key that created it; no other key sees it.
-- A write held for review is followed through its review (review_id): the review's status, result and
-- failure, which the write's workflow keeps, are the task's state, so any api process answers for it and the
-- task outlives restarts. Its id is the review id. A write answered at once (applied, denied, failed) keeps
-- here the tool result the agent would have got without a task; its id is the workflow id.
CREATE TABLE mcp_tasks (
  id          text PRIMARY KEY,
  -- Creation order, for pages of tasks/list.
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  org_id      text NOT NULL REFERENCES organizations(id),
  api_key_id  text NOT NULL REFERENCES api_keys(id),
  -- The MCP tool called, e.g. create_task.
  tool        text NOT NULL,
  review_id   text UNIQUE REFERENCES reviews(id),
  -- For writes answered at once: completed or failed, and the CallToolResult.
  status      text CHECK (status IN ('completed', 'failed')),
  result      jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((review_id IS NULL) = (status IS NOT NULL)),
  CHECK ((status IS NULL) = (result IS NULL))
);
CREATE INDEX mcp_tasks_org_key ON mcp_tasks (org_id, api_key_id, seq);

-- Down Migration

DROP TABLE mcp_tasks;
