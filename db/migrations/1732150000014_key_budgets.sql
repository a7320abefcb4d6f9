-- Up Migration

-- A key's own daily request budget (REST and MCP together, the organization's local day), within the organization's
-- budget; NULL: only the organization's budget applies. Counted in usage_counters as keyday:<key id>.
ALTER TABLE api_keys ADD COLUMN daily_request_budget integer CHECK (daily_request_budget > 0);

-- A key's daily caps of writes submitted, by gated-write operation ({"customers.update": 20}); counted in
-- usage_counters as keyop:<key id>:<operation>, whatever the policy decides.
ALTER TABLE api_keys ADD COLUMN write_caps jsonb NOT NULL DEFAULT '{}'
  CHECK (jsonb_typeof(write_caps) = 'object');

-- Down Migration

ALTER TABLE api_keys DROP COLUMN write_caps;
ALTER TABLE api_keys DROP COLUMN daily_request_budget;
