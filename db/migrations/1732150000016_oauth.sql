-- Up Migration

-- What the OAuth authorization server (oidc-provider) keeps between requests: interactions, sessions, grants,
-- authorization codes, access and refresh tokens, registered clients. A record is found by the SHA-256 digest of
-- its id (base64url), never by the id itself: for codes and tokens the id is the secret a client holds, and the
-- payload is stored without it, so that a copy of this table lets no one use a token.
CREATE TABLE oauth_records (
  kind text NOT NULL,
  id_digest text NOT NULL,
  payload jsonb NOT NULL,
  grant_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (kind, id_digest)
);
CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_records_uid ON oauth_records (kind, uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;

-- The authorization server's own secrets, made once by whichever api starts first and shared by every api: the
-- keys that sign its cookies, and its signing key set.
CREATE TABLE oauth_secrets (
  name text PRIMARY KEY,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A client a person connected (OAuth) is an API key of the organization: its principal in the policy, its limits
-- and budgets, its held writes. These say which client, and which grant its tokens come from; NULL for a key made
-- in Settings or by the CLI. `created_by` is the person who connected it.
ALTER TABLE api_keys ADD COLUMN oauth_client_id text;
ALTER TABLE api_keys ADD COLUMN oauth_client_uri text;
ALTER TABLE api_keys ADD COLUMN oauth_grant_id text UNIQUE;
-- The consent (the authorization's interaction) that made or last renewed it: one consent, one connection.
ALTER TABLE api_keys ADD COLUMN oauth_consent_uid text UNIQUE;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_oauth_whole CHECK ((oauth_client_id IS NULL) = (oauth_grant_id IS NULL));

-- Down Migration

ALTER TABLE api_keys DROP CONSTRAINT api_keys_oauth_whole;
ALTER TABLE api_keys DROP COLUMN oauth_consent_uid;
ALTER TABLE api_keys DROP COLUMN oauth_grant_id;
ALTER TABLE api_keys DROP COLUMN oauth_client_uri;
ALTER TABLE api_keys DROP COLUMN oauth_client_id;
DROP TABLE oauth_secrets;
DROP TABLE oauth_records;
