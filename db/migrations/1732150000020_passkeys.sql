-- Up Migration

-- People's passkeys (WebAuthn credentials): a person signs in with one, and signs approvals with one when the
-- organization needs it. The public key is kept as the authenticator gave it (COSE); the audit ledger keeps it
-- as SubjectPublicKeyInfo too (person.passkey_added), for verifiers that work offline.
CREATE TABLE passkeys (
  id             text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES organizations(id),
  user_id        text NOT NULL REFERENCES users(id),
  -- base64url, as WebAuthn names it; unique across organizations, since a sign-in names only the credential.
  credential_id  text NOT NULL UNIQUE,
  public_key     bytea NOT NULL,
  counter        bigint NOT NULL DEFAULT 0,
  transports     text[] NOT NULL DEFAULT '{}',
  name           text NOT NULL,
  aaguid         text,
  backed_up      boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz
);
CREATE INDEX passkeys_user ON passkeys (user_id);

-- The opaque user handle a person's passkeys carry (WebAuthn's user.id): random, never the user id or email.
ALTER TABLE users ADD COLUMN passkey_handle text UNIQUE;

-- Challenges handed out for registering a passkey and for signing in with one: random, single use, five
-- minutes; kept by their SHA-256 digest and swept as new ones are made. (An approval's challenge is not stored:
-- it is the digest of the review, payload, verdict and time it commits to.)
CREATE TABLE passkey_challenges (
  digest      bytea PRIMARY KEY,
  purpose     text NOT NULL CHECK (purpose IN ('register', 'sign_in')),
  -- The person registering (null for a sign-in, where nobody is known yet).
  user_id     text REFERENCES users(id),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at);

-- Down Migration

DROP TABLE passkey_challenges;
ALTER TABLE users DROP COLUMN passkey_handle;
DROP TABLE passkeys;
