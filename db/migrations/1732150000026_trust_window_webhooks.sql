-- Up Migration

-- Trust windows are told to webhook receivers: trust_window.opened (a person's approval opened one) and
-- trust_window.closed (a person closed it, or the write that took its last use; `reason` says which).
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

-- Down Migration

CREATE OR REPLACE FUNCTION webhook_event_type(audit audit_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'review' THEN 'review.created'
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'deny' THEN 'write.denied'
    WHEN audit.type IN ('review.approved', 'review.denied') THEN 'review.decided'
    WHEN audit.type IN ('review.expired', 'write.applied', 'write.failed', 'write.undone') THEN audit.type
    WHEN audit.type = 'api_key.created' THEN 'key.created'
    WHEN audit.type = 'api_key.revoked' THEN 'key.revoked'
    WHEN audit.type = 'policy.updated' THEN 'policy.changed'
  END
$$;
