-- Up Migration

-- Decision links: for each person told of a held write, an Approve and a Deny link, bound to the review, to that
-- person and to the digest of the payload they were sent (the agent's input and the edit held over it). A link is
-- found by the SHA-256 of its token, never by the token, so a copy of this table decides nothing. It expires with
-- its review; using one of a person's links for a review voids all of them (used_at), and a review decided by any
-- path voids every link to it (the confirm checks the review is still pending).
CREATE TABLE decision_links (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id          text NOT NULL REFERENCES organizations(id),
  review_id       text NOT NULL REFERENCES reviews(id) ON DELETE CASCADE,
  user_id         text NOT NULL REFERENCES users(id),
  verdict         text NOT NULL CHECK (verdict IN ('approved', 'denied')),
  payload_digest  text NOT NULL,
  -- The reviewer's edit the payload held when the link was sent (null: the agent's version).
  edit_id         text,
  token_digest    bytea NOT NULL,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX decision_links_token ON decision_links (token_digest);
CREATE INDEX decision_links_review_person ON decision_links (review_id, user_id);

-- Down Migration

DROP TABLE decision_links;
