-- Up Migration

-- The console's overview counts an organization's decisions by day over the last week (domain/usage/overview.ts):
-- without this, it would read every decision the organization ever had (gate_decisions_org is by id). The decision
-- is carried in the index, so the count reads the index alone, not the rows with their inputs. The Policy page's
-- count of how often each rule decided over a day, a week or a month (domain/policy-sets/rule-counts.ts) reads its
-- period by this index too.
CREATE INDEX gate_decisions_org_created ON gate_decisions (org_id, created_at) INCLUDE (decision);

-- Down Migration

DROP INDEX gate_decisions_org_created;
