-- Up Migration

-- Edit-then-approve for a held changeset: a reviewer changes fields of some of its items as they approve it. The
-- edited changeset is one version of the held write, a review_edits row like a single write's edit (its input the
-- whole changeset as edited, its decision the strictest item's), which the review points at once the policy let it
-- through. Here, each item of that version as the policy decided it again (every item not rejected, edited or
-- not): its input ($ref:… kept), the fields that differ from the agent's, who changed them, and what the policy saw
-- and said. Applying a held changeset reads its items from the version the review points at. A version the policy
-- denied stays on record, with the decision that refused it, and is never pointed at.
CREATE TABLE changeset_item_edits (
  edit_id            text NOT NULL REFERENCES review_edits(id) ON DELETE CASCADE,
  changeset_id       text NOT NULL REFERENCES changesets(id) ON DELETE CASCADE,
  idx                integer NOT NULL,
  org_id             text NOT NULL REFERENCES organizations(id),
  input              jsonb NOT NULL,
  -- The fields whose values differ from the agent's item (as its write's schema reads it); empty: not edited.
  fields             text[] NOT NULL DEFAULT '{}',
  edited_by          text REFERENCES users(id),
  edited_at          timestamptz,
  decision           text NOT NULL CHECK (decision IN ('allow', 'review', 'deny')),
  reason             text NOT NULL,
  policy_ids         text[] NOT NULL,
  approvals_required smallint NOT NULL DEFAULT 1,
  resource           jsonb NOT NULL,
  before             jsonb,
  context            jsonb NOT NULL,
  PRIMARY KEY (edit_id, idx),
  FOREIGN KEY (changeset_id, idx) REFERENCES changeset_items(changeset_id, idx) ON DELETE CASCADE
);
CREATE INDEX changeset_item_edits_item ON changeset_item_edits (changeset_id, idx);

-- Down Migration

DROP TABLE changeset_item_edits;
