-- Up Migration

-- The console's overview counts an organization's decisions by day over the last week (domain/usage/overview.ts):
-- without this, it would read every decision the organization ever had (gate_decisions_org is by id).
CREATE INDEX gate_decisions_org_created ON gate_decisions (org_id, created_at);

-- Down Migration

DROP INDEX gate_decisions_org_created;
