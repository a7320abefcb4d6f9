-- Up Migration

-- The Policy page counts how often each rule decided over the last day, week or month
-- (domain/policy-sets/rule-counts.ts): decisions are kept for as long as the organization exists, so the period is
-- read by time, not by walking all of them.
CREATE INDEX gate_decisions_org_created ON gate_decisions (org_id, created_at);

-- Down Migration

DROP INDEX gate_decisions_org_created;
