-- Up Migration

-- A review's fifth state: withdrawn, when the key that made the held write is revoked or its connection ends
-- (domain/gate/reviews/withdraw.ts). Nothing can be decided of it and nothing of it is applied. Who withdrew it
-- (a person, the key itself, or the system: the CLI) and why are kept with it; decided_at says when.
ALTER TABLE reviews DROP CONSTRAINT reviews_status_check;
ALTER TABLE reviews ADD CONSTRAINT reviews_status_check CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'withdrawn'));
ALTER TABLE reviews
  ADD COLUMN withdrawn_reason text CHECK (withdrawn_reason IN ('key_revoked', 'connection_ended')),
  ADD COLUMN withdrawn_by_type text CHECK (withdrawn_by_type IN ('user', 'api_key', 'system')),
  ADD COLUMN withdrawn_by_id text,
  ADD CONSTRAINT reviews_withdrawn_why CHECK ((status = 'withdrawn') = (withdrawn_reason IS NOT NULL AND withdrawn_by_type IS NOT NULL));

-- Webhook receivers are told: review.withdrawn, with who withdrew it (the actor) and why (`reason`).
CREATE OR REPLACE FUNCTION webhook_event_type(audit audit_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'review' THEN 'review.created'
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'deny' THEN 'write.denied'
    WHEN audit.type IN ('review.approved', 'review.denied') THEN 'review.decided'
    WHEN audit.type IN ('review.expired', 'review.withdrawn', 'write.applied', 'write.failed', 'write.undone', 'trust_window.opened', 'trust_window.closed') THEN audit.type
    WHEN audit.type = 'api_key.created' THEN 'key.created'
    WHEN audit.type = 'api_key.revoked' THEN 'key.revoked'
    WHEN audit.type = 'policy.updated' THEN 'policy.changed'
  END
$$;

-- Down Migration

CREATE OR REPLACE FUNCTION webhook_event_type(audit audit_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'review' THEN 'review.created'
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'deny' THEN 'write.denied'
    WHEN audit.type IN ('review.approved', 'review.denied') THEN 'review.decided'
    WHEN audit.type IN ('review.expired', 'write.applied', 'write.failed', 'write.undone', 'trust_window.opened', 'trust_window.closed') THEN audit.type
    WHEN audit.type = 'api_key.created' THEN 'key.created'
    WHEN audit.type = 'api_key.revoked' THEN 'key.revoked'
    WHEN audit.type = 'policy.updated' THEN 'policy.changed'
  END
$$;

-- A withdrawn review reads as denied once its state is gone: nothing of it was applied, and nobody may decide it.
ALTER TABLE reviews DROP CONSTRAINT reviews_withdrawn_why;
UPDATE reviews SET status = 'denied' WHERE status = 'withdrawn';
ALTER TABLE reviews DROP COLUMN withdrawn_by_id, DROP COLUMN withdrawn_by_type, DROP COLUMN withdrawn_reason;
ALTER TABLE reviews DROP CONSTRAINT reviews_status_check;
ALTER TABLE reviews ADD CONSTRAINT reviews_status_check CHECK (status IN ('pending', 'approved', 'denied', 'expired'));
