-- Up Migration

-- Trust windows: approving a held write, a person lets the same API key make writes like it without review for a
-- bounded time and a bounded number of uses. A window matches one key, one operation and the attribute values the
-- person picked from the held write's resource (`match`, attribute -> value). It is consulted only when the policy
-- says Review (never Deny): the decision's transaction takes one use with a guarded UPDATE (uses < max_uses and
-- expires_at > now()), so two writes racing for the last use cannot both get it.
CREATE TABLE trust_windows (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id),
  api_key_id    text NOT NULL REFERENCES api_keys(id),
  operation     text NOT NULL,
  match         jsonb NOT NULL CHECK (jsonb_typeof(match) = 'object'),
  -- The rules that held the approved write and the approvals it needed: a window lets through only writes held by
  -- those rules alone, needing no more approvals (a stricter rule's hold is never waved through).
  policy_ids    text[] NOT NULL DEFAULT '{}',
  approvals     smallint NOT NULL DEFAULT 1,
  max_uses      integer NOT NULL CHECK (max_uses BETWEEN 1 AND 1000),
  uses          integer NOT NULL DEFAULT 0 CHECK (uses >= 0 AND uses <= max_uses),
  expires_at    timestamptz NOT NULL,
  opened_by     text NOT NULL REFERENCES users(id),
  -- The approval that opened it (null once the review is pruned by retention; the audit trail keeps it).
  review_id     text REFERENCES reviews(id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  closed_at     timestamptz,
  closed_by     text REFERENCES users(id)
);
CREATE INDEX trust_windows_open ON trust_windows (org_id, api_key_id, operation) WHERE closed_at IS NULL;
CREATE INDEX trust_windows_org ON trust_windows (org_id, created_at DESC);

-- The window that let a write through (its decision is then an allow the policy alone would have held).
ALTER TABLE gate_decisions ADD COLUMN trust_window_id text REFERENCES trust_windows(id);

-- Down Migration

ALTER TABLE gate_decisions DROP COLUMN trust_window_id;
DROP TABLE trust_windows;
