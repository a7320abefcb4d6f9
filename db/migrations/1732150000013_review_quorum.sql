-- Up Migration

-- Whether a person may approve a write made with an API key they created themselves (off: they may not).
ALTER TABLE organizations ADD COLUMN self_approval boolean NOT NULL DEFAULT false;

-- Whether an agent told of a Deny or a Review is sent the text of the rules that decided (off: their ids, reasons,
-- hints and the fields they read, never the policy itself).
ALTER TABLE organizations ADD COLUMN share_policy_text boolean NOT NULL DEFAULT false;

-- How many distinct people must approve a held write (the policy's @approvals on the rule that held it).
ALTER TABLE reviews ADD COLUMN approvals_required smallint NOT NULL DEFAULT 1 CHECK (approvals_required BETWEEN 1 AND 10);

-- Each person's approval of a held write, one per person. A review is approved once it has as many as it needs;
-- approvals given to a version a person later edited are removed with the edit.
CREATE TABLE review_approvals (
  review_id    text NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
  user_id      text NOT NULL REFERENCES users(id),
  org_id       text NOT NULL REFERENCES organizations(id),
  approved_at  timestamptz NOT NULL DEFAULT now(),
  comment      text,
  PRIMARY KEY (review_id, user_id)
);

-- A reviewer's change to a held write, decided by the policy again before it may be approved: the edited input,
-- what the policy saw, and its decision. The review points at the edit it will apply.
CREATE TABLE review_edits (
  id              text PRIMARY KEY,
  review_id       text NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
  org_id          text NOT NULL REFERENCES organizations(id),
  edited_by       text NOT NULL REFERENCES users(id),
  -- The fields whose values differ from the agent's version (as its schema reads it, defaults filled in).
  fields          text[] NOT NULL,
  input           jsonb NOT NULL,
  resource        jsonb NOT NULL,
  context         jsonb NOT NULL,
  decision        text NOT NULL CHECK (decision IN ('allow', 'review', 'deny')),
  reason          text NOT NULL,
  policy_ids      text[] NOT NULL,
  policy_version  integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX review_edits_review ON review_edits (review_id, created_at);
ALTER TABLE reviews ADD COLUMN edit_id text REFERENCES review_edits(id);

-- Down Migration

ALTER TABLE reviews DROP COLUMN edit_id;
DROP TABLE review_edits;
DROP TABLE review_approvals;
ALTER TABLE reviews DROP COLUMN approvals_required;
ALTER TABLE organizations DROP COLUMN share_policy_text;
ALTER TABLE organizations DROP COLUMN self_approval;
