-- Up Migration

-- Changesets: several gated writes an agent submits as one (domain/gate/changesets). The changeset itself is
-- decided and applied under one workflow id: its gate_decisions row (operation 'changesets.submit') carries the
-- strictest item's decision, its review (if held) is one review of the queue, and its applied_writes row is the
-- claim that makes applying it happen once. Each item's own decision, proposal and applied write are kept here.
CREATE TABLE changesets (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id),
  workflow_id  text NOT NULL UNIQUE,
  mode         text NOT NULL CHECK (mode IN ('all_or_nothing', 'divisible')),
  item_count   integer NOT NULL,
  api_key_id   text NOT NULL REFERENCES api_keys(id),
  -- allow, review, deny (the strictest item's), or refused (a review was due and the queue was full).
  decision     text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  applied_at   timestamptz
);
CREATE INDEX changesets_org ON changesets (org_id, id);

CREATE TABLE changeset_items (
  changeset_id     text NOT NULL REFERENCES changesets(id) ON DELETE CASCADE,
  idx              integer NOT NULL,
  org_id           text NOT NULL REFERENCES organizations(id),
  ref              text,
  operation        text NOT NULL,
  -- The item as the agent sent it ($ref:… strings kept as sent).
  input            jsonb NOT NULL,
  decision         text NOT NULL CHECK (decision IN ('allow', 'review', 'deny')),
  reason           text NOT NULL,
  policy_ids       text[] NOT NULL,
  policy_errors    text[] NOT NULL DEFAULT '{}',
  approvals_required smallint NOT NULL DEFAULT 1,
  resource_type    text NOT NULL,
  -- What the policy saw: the record as the changeset would make it, the record before (updates, deletes), the context.
  proposed_id      text NOT NULL,
  resource         jsonb NOT NULL,
  before           jsonb,
  context          jsonb NOT NULL,
  -- A reviewer's verdict on this item of a divisible changeset (null: none given, i.e. approved with the whole).
  verdict          text CHECK (verdict IN ('approved', 'rejected')),
  verdict_reason   text,
  verdict_by       text REFERENCES users(id),
  -- Once applied: the record's id, the write's result (the record after), and the record before it (for undo).
  applied_id       text,
  result           jsonb,
  applied_before   jsonb,
  applied_at       timestamptz,
  PRIMARY KEY (changeset_id, idx)
);
CREATE INDEX changeset_items_resource ON changeset_items (org_id, resource_type, applied_id);

-- A review that holds a changeset (the queue shows it as one card with every item).
ALTER TABLE reviews ADD COLUMN changeset_id text REFERENCES changesets(id);

-- Down Migration

ALTER TABLE reviews DROP COLUMN changeset_id;
DROP TABLE changeset_items;
DROP TABLE changesets;
