-- Up Migration

-- People sign in to the console with a password (scrypt, see domain/identity/passwords.ts). Repeated failures
-- slow the next attempts and then lock the account for a while; a deactivated person cannot sign in at all.
ALTER TABLE users
  ADD COLUMN password_hash     text,
  ADD COLUMN deactivated_at    timestamptz,
  ADD COLUMN failed_sign_ins   integer NOT NULL DEFAULT 0,
  ADD COLUMN locked_until      timestamptz,
  ADD COLUMN updated_at        timestamptz NOT NULL DEFAULT now();

-- Console sessions. The cookie carries the secret; only its SHA-256 digest is stored, like every token.
CREATE TABLE sessions (
  id             text PRIMARY KEY,
  user_id        text NOT NULL REFERENCES users(id),
  org_id         text NOT NULL REFERENCES organizations(id),
  secret_digest  bytea NOT NULL,
  -- Sent back in a header on every state-changing console call (cross-site request protection).
  csrf_token     text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_seen_at   timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  ended_at       timestamptz,
  user_agent     text
);
CREATE INDEX sessions_user ON sessions (user_id) WHERE ended_at IS NULL;

-- One-time links to set a password: an invitation, a reset, the first start's demo people.
CREATE TABLE password_links (
  id             text PRIMARY KEY,
  user_id        text NOT NULL REFERENCES users(id),
  org_id         text NOT NULL REFERENCES organizations(id),
  secret_digest  bytea NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  used_at        timestamptz
);
CREATE INDEX password_links_user ON password_links (user_id) WHERE used_at IS NULL;

-- Keys record the person who made them (null: the CLI or a key made before this column), and may expire.
ALTER TABLE api_keys
  ADD COLUMN created_by  text REFERENCES users(id),
  ADD COLUMN expires_at  timestamptz;

ALTER TABLE call_log DROP CONSTRAINT call_log_interface_check;
ALTER TABLE call_log ADD CONSTRAINT call_log_interface_check CHECK (interface IN ('rest', 'mcp', 'console'));

-- Down Migration

ALTER TABLE call_log DROP CONSTRAINT call_log_interface_check;
DELETE FROM call_log WHERE interface = 'console';
ALTER TABLE call_log ADD CONSTRAINT call_log_interface_check CHECK (interface IN ('rest', 'mcp'));
ALTER TABLE api_keys DROP COLUMN created_by, DROP COLUMN expires_at;
DROP TABLE password_links;
DROP TABLE sessions;
ALTER TABLE users
  DROP COLUMN password_hash,
  DROP COLUMN deactivated_at,
  DROP COLUMN failed_sign_ins,
  DROP COLUMN locked_until,
  DROP COLUMN updated_at;
