-- Up Migration

-- Who could have set a person's password (domain/identity/people.ts): an owner or admin who was answered the
-- person's set-password link because no email was configured. Such a person cannot approve writes of keys that
-- one made, and their approvals and that one's count as one toward a quorum (domain/gate/reviews/verdicts.ts).
-- A later link shown to someone else replaces it; a link emailed to the person, or printed by the operator's CLI,
-- clears it. set_up_at: since when (what was added to the account since may be theirs).
ALTER TABLE users
  ADD COLUMN set_up_by text REFERENCES users(id),
  ADD COLUMN set_up_at timestamptz,
  -- The last reset of their password by someone else (an owner or admin), for the owners to be told when it is
  -- followed by an approval within a day.
  ADD COLUMN password_reset_by text REFERENCES users(id),
  ADD COLUMN password_reset_at timestamptz;
COMMENT ON COLUMN users.set_up_by IS 'The owner or admin who was shown this person''s set-password link (no email configured); null: only the person or the operator saw it';
COMMENT ON COLUMN users.password_reset_by IS 'Who last reset this person''s password, when it was someone else (password_reset_at: when)';

-- Down Migration

ALTER TABLE users DROP COLUMN set_up_by, DROP COLUMN set_up_at, DROP COLUMN password_reset_by, DROP COLUMN password_reset_at;
