-- Up Migration

-- A redelivery is marked as one for good: its original may be pruned (redelivery_of set null) while it stays, and
-- the one-first-delivery-per-event rule must not then count it.
ALTER TABLE webhook_deliveries ADD COLUMN is_redelivery boolean NOT NULL DEFAULT false;
UPDATE webhook_deliveries SET is_redelivery = true WHERE redelivery_of IS NOT NULL;
DROP INDEX webhook_deliveries_first;
CREATE UNIQUE INDEX webhook_deliveries_first ON webhook_deliveries (event_id, endpoint_id) WHERE NOT is_redelivery;

-- Owners still to be told that Gatehouse switched the endpoint off (set with the switch, cleared once told).
ALTER TABLE webhook_endpoints ADD COLUMN owners_to_tell boolean NOT NULL DEFAULT false;

-- An escalation wait up to the longest a review waits (30 days) does not fit an integer of milliseconds.
ALTER TABLE organizations ALTER COLUMN review_escalation_ms TYPE bigint;

-- Down Migration

ALTER TABLE organizations ALTER COLUMN review_escalation_ms TYPE integer;
ALTER TABLE webhook_endpoints DROP COLUMN owners_to_tell;
DROP INDEX webhook_deliveries_first;
CREATE UNIQUE INDEX webhook_deliveries_first ON webhook_deliveries (event_id, endpoint_id) WHERE redelivery_of IS NULL;
ALTER TABLE webhook_deliveries DROP COLUMN is_redelivery;
