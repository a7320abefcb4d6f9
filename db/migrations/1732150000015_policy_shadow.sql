-- Up Migration

-- A draft policy set running in shadow beside the live one: every gated write is also decided by it, and what it
-- would have decided is recorded on the decision, without affecting the write. One per organization at a time.
CREATE TABLE policy_shadows (
  org_id      text PRIMARY KEY REFERENCES organizations(id),
  source      text NOT NULL,
  created_by  text REFERENCES users(id),
  started_at  timestamptz NOT NULL DEFAULT now()
);

-- What the shadow policy decided of this write (decision, reason, policy_ids, started_at of the shadow); null when
-- no shadow ran.
ALTER TABLE gate_decisions ADD COLUMN shadow jsonb;

-- Down Migration

ALTER TABLE gate_decisions DROP COLUMN shadow;
DROP TABLE policy_shadows;
