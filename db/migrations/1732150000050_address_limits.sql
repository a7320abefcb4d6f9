-- Up Migration

-- The per-address limits (sign-ins, passkey sign-ins, decision links, OAuth registration and authorization), shared
-- by every api: one row per limit and client address, counting the window that began with its first request
-- (domain/usage/address-counters.ts). Each request counts itself in one statement that returns the count; rows whose
-- window ended are swept.
CREATE TABLE address_counters (
  -- The limit (the app's namespace, the route) and the client's address.
  key        text        PRIMARY KEY,
  count      integer     NOT NULL,
  -- When the window ends: the next request after it starts a new one.
  expires_at timestamptz NOT NULL
);
CREATE INDEX address_counters_expiry ON address_counters (expires_at);
COMMENT ON TABLE address_counters IS 'Requests per limit and client address in the current window, shared by every api process (@fastify/rate-limit''s store)';

-- Failed password attempts (domain/identity/sign-in-throttle.ts): a row per account and client address, and one per
-- account over every address. An account is named by the digest of the organization's slug and the email as typed,
-- so that a name that matches nobody is throttled by the same rows as one that does, and the table names nobody.
CREATE TABLE sign_in_throttles (
  key             bytea       PRIMARY KEY,
  -- Failed attempts, each counted before its password is checked; one is forgotten every so often.
  failures        integer     NOT NULL DEFAULT 0,
  last_failure_at timestamptz,
  -- No attempt is heard before then.
  wait_until      timestamptz,
  -- A row of an account and address: the address signed this account in, and is spared the account's own wait until then.
  known_until     timestamptz,
  expires_at      timestamptz NOT NULL
);
CREATE INDEX sign_in_throttles_expiry ON sign_in_throttles (expires_at);
COMMENT ON TABLE sign_in_throttles IS 'Failed password attempts per account and address and per account (keyed by digests), with the waits they impose';

-- Down Migration
DROP TABLE sign_in_throttles;
DROP TABLE address_counters;
