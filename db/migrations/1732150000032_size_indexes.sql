-- Up Migration

-- The review queue's filter choices (domain/gate/reviews/filters.ts) name every key and operation with a review in
-- the organization, whatever its status: found by skipping through this index pair by pair (a step each), where a
-- GROUP BY read every review the organization ever had (1.5 s at a million decided). A decision opens a review
-- exactly when it is 'review' (domain/gate/decide.ts), and a recorded decision never changes.
CREATE INDEX gate_decisions_org_reviewed ON gate_decisions (org_id, api_key_id, operation) WHERE decision = 'review';

-- The audit trail filtered by type (domain/audit/trail.ts): a page of a rare type (policy.updated) read the
-- organization's events back from the newest until it had a page, all of them when there are fewer (0.18 s at a
-- million events).
CREATE INDEX audit_events_org_type ON audit_events (org_id, type, id);

-- Down Migration

DROP INDEX audit_events_org_type;
DROP INDEX gate_decisions_org_reviewed;
