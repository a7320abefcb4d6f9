-- Up Migration

-- What an organization's plan allows. Plans are data: a new plan, or new numbers for one, is a row, and takes
-- effect on the next request of every organization on it.
CREATE TABLE plans (
  name                text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  -- Requests a day, REST and MCP together, per organization; the day is the organization's local day.
  daily_budget        integer NOT NULL CHECK (daily_budget >= 0),
  -- Requests a minute (UTC minutes) per token, each interface counted apart.
  rest_per_minute     integer NOT NULL CHECK (rest_per_minute >= 0),
  mcp_per_minute      integer NOT NULL CHECK (mcp_per_minute >= 0),
  -- Writes held for review at once; past it, writes that would be held are refused (review_queue_full).
  pending_review_cap  integer NOT NULL CHECK (pending_review_cap >= 0),
  -- Optional parts of the API the plan includes: expenses, work_logs.
  features            text[] NOT NULL DEFAULT '{}',
  description         text NOT NULL DEFAULT ''
);

INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description) VALUES
  ('free', 1000, 60, 120, 20, '{}', 'To try Gatehouse with one agent: both interfaces, a small daily budget'),
  ('pro', 25000, 300, 600, 200, '{expenses}', 'A team with a few agents and automations; adds expenses'),
  ('business', 250000, 1200, 2400, 1000, '{expenses,work_logs}', 'Many agents and integrations; adds expenses and work logs');

ALTER TABLE organizations
  ADD CONSTRAINT organizations_plan_fkey FOREIGN KEY (plan) REFERENCES plans (name) ON UPDATE CASCADE;

-- Request counters: one row per token, interface and UTC minute (scope `rest:<token id>` or `mcp:<token id>`,
-- period `2026-11-21T09:41`), and one per organization and local day (scope `day:<org id>`, period
-- `2026-11-21`). Every authenticated request adds one to both in one statement, refused requests too.
-- Rows past expires_at are never read again (the next minute or day has another period) and are swept now
-- and then. Updates touch only count, which no index covers, so they stay HOT; the fill factor leaves room.
CREATE TABLE usage_counters (
  scope       text NOT NULL,
  period      text NOT NULL,
  count       integer NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (scope, period)
) WITH (fillfactor = 70);
CREATE INDEX usage_counters_expiry ON usage_counters (expires_at);

-- A write the policy would hold for review, refused because the organization's review queue was full.
ALTER TABLE gate_decisions DROP CONSTRAINT gate_decisions_decision_check;
ALTER TABLE gate_decisions ADD CONSTRAINT gate_decisions_decision_check CHECK (decision IN ('allow', 'review', 'deny', 'refused'));

-- Down Migration

ALTER TABLE gate_decisions DROP CONSTRAINT gate_decisions_decision_check;
ALTER TABLE gate_decisions ADD CONSTRAINT gate_decisions_decision_check CHECK (decision IN ('allow', 'review', 'deny'));
DROP TABLE usage_counters;
ALTER TABLE organizations DROP CONSTRAINT organizations_plan_fkey;
DROP TABLE plans;
