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

-- A page of the queue is found by its ids first (domain/gate/reviews/reads.ts listReviews): with the decision's id in
-- the organization's index, that search reads the index alone, also when a filter asks for the decision's key or
-- operation. Without it, PostgreSQL preferred to walk the primary key from the newest review of any organization,
-- passing over every newer review of the others (0.28 s for a key's page at 100,000 reviews behind 1,000,000).
DROP INDEX reviews_org;
CREATE INDEX reviews_org ON reviews (org_id, id) INCLUDE (decision_id);

-- Down Migration

DROP INDEX reviews_org;
CREATE INDEX reviews_org ON reviews (org_id, id);
DROP INDEX audit_events_org_type;
DROP INDEX gate_decisions_org_reviewed;
