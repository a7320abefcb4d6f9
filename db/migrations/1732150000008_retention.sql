-- Up Migration

-- Retention prunes the call log by age and decided reviews by the time they were decided (domain/usage/retention.ts).
CREATE INDEX call_log_created ON call_log (created_at);
CREATE INDEX reviews_decided ON reviews (decided_at) WHERE status <> 'pending';

-- Down Migration

DROP INDEX reviews_decided;
DROP INDEX call_log_created;
