-- Up Migration

-- Who held the account a key was made from, when it was made (domain/identity/set-up.ts): the owner or admin who
-- had been given the creator's set-password link, and so could have made the key signed in as them. That one stays
-- tied to the key after the account changes hands: they cannot approve its writes (domain/gate/reviews/verdicts.ts).
ALTER TABLE api_keys ADD COLUMN created_while_held_by text REFERENCES users(id);
COMMENT ON COLUMN api_keys.created_while_held_by IS 'The creator''s set_up_by when the key was made: who could have made it signed in as them';

-- Down Migration

ALTER TABLE api_keys DROP COLUMN created_while_held_by;
