-- Up Migration

-- What undoing an applied write needs, kept when it is applied: where its record lives, what kind of write it
-- was, and the record before it (null for a create). `result` already holds the record after. Writes applied
-- before this migration (and writes that touch several records, such as a meeting ingest) have no record_table
-- and cannot be undone.
ALTER TABLE applied_writes
  ADD COLUMN record_table text,
  ADD COLUMN write_kind   text CHECK (write_kind IN ('create', 'update', 'delete')),
  ADD COLUMN before       jsonb,
  -- The undo that took the write back: the undo's workflow id (an agent's) or undo_… (a person's).
  ADD COLUMN undone_by    text,
  ADD COLUMN undone_at    timestamptz;
CREATE INDEX applied_writes_undone_by ON applied_writes (undone_by) WHERE undone_by IS NOT NULL;

-- How long after it was applied a write may be undone.
ALTER TABLE organizations ADD COLUMN undo_window_days integer NOT NULL DEFAULT 7 CHECK (undo_window_days BETWEEN 1 AND 365);

-- An undo is told to webhook receivers as write.undone (naming the write it undoes in `undoes`).
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

-- Down Migration

CREATE OR REPLACE FUNCTION webhook_event_type(audit audit_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'review' THEN 'review.created'
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'deny' THEN 'write.denied'
    WHEN audit.type IN ('review.approved', 'review.denied') THEN 'review.decided'
    WHEN audit.type IN ('review.expired', 'write.applied', 'write.failed') THEN audit.type
    WHEN audit.type = 'api_key.created' THEN 'key.created'
    WHEN audit.type = 'api_key.revoked' THEN 'key.revoked'
    WHEN audit.type = 'policy.updated' THEN 'policy.changed'
  END
$$;
ALTER TABLE organizations DROP COLUMN undo_window_days;
DROP INDEX applied_writes_undone_by;
ALTER TABLE applied_writes DROP COLUMN undone_at, DROP COLUMN undone_by, DROP COLUMN before, DROP COLUMN write_kind, DROP COLUMN record_table;
