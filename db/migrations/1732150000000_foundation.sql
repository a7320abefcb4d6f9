-- Up Migration

CREATE TABLE organizations (
  id          text PRIMARY KEY,
  slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
  name        text NOT NULL,
  plan        text NOT NULL DEFAULT 'free',
  timezone    text NOT NULL DEFAULT 'UTC',
  api_access  boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id),
  label         text NOT NULL,
  access        text NOT NULL CHECK (access IN ('read', 'read_write')),
  abilities     text[] NOT NULL,
  token_digest  bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX api_keys_org ON api_keys (org_id, created_at);

CREATE TABLE users (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id),
  email       text NOT NULL,
  name        text,
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'reviewer', 'member')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, email)
);

CREATE TABLE personal_tokens (
  id            text PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users(id),
  org_id        text NOT NULL REFERENCES organizations(id),
  token_digest  bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX personal_tokens_user ON personal_tokens (user_id);

CREATE TABLE policy_sets (
  org_id      text NOT NULL REFERENCES organizations(id),
  version     integer NOT NULL,
  source      text NOT NULL,
  created_by  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, version)
);

CREATE TABLE tasks (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id),
  title        text NOT NULL,
  description  text,
  status       text NOT NULL,
  priority     text NOT NULL,
  due_on       date,
  tags         text[] NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  version      integer NOT NULL DEFAULT 1
);
CREATE INDEX tasks_org_id ON tasks (org_id, id);
CREATE INDEX tasks_org_status_id ON tasks (org_id, status, id);

-- Every policy decision on a gated write, kept for as long as the organization exists.
CREATE TABLE gate_decisions (
  id              text PRIMARY KEY,
  org_id          text NOT NULL REFERENCES organizations(id),
  workflow_id     text NOT NULL UNIQUE,
  operation       text NOT NULL,
  interface       text NOT NULL CHECK (interface IN ('rest', 'mcp')),
  api_key_id      text NOT NULL REFERENCES api_keys(id),
  decision        text NOT NULL CHECK (decision IN ('allow', 'review', 'deny')),
  reason          text NOT NULL,
  policy_ids      text[] NOT NULL,
  -- Policies that could not be evaluated for this request (a missing attribute, say).
  policy_errors   text[] NOT NULL DEFAULT '{}',
  policy_version  integer NOT NULL,
  input           jsonb NOT NULL,
  resource        jsonb NOT NULL,
  context         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gate_decisions_org ON gate_decisions (org_id, id);

CREATE TABLE reviews (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id),
  decision_id  text NOT NULL UNIQUE REFERENCES gate_decisions(id),
  workflow_id  text NOT NULL UNIQUE,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  decided_at   timestamptz,
  decided_by   text REFERENCES users(id),
  comment      text,
  applied_at   timestamptz,
  result       jsonb,
  -- Set when an approved write could not be applied (the record changed meanwhile, say).
  failure      jsonb
);
CREATE INDEX reviews_org_status ON reviews (org_id, status, id);
CREATE INDEX reviews_org ON reviews (org_id, id);

-- One row per applied gated write: what makes the write activity idempotent.
CREATE TABLE applied_writes (
  workflow_id    text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES organizations(id),
  operation      text NOT NULL,
  resource_type  text NOT NULL,
  resource_id    text NOT NULL,
  result         jsonb NOT NULL,
  applied_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE audit_events (
  id             text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES organizations(id),
  type           text NOT NULL,
  actor_type     text NOT NULL CHECK (actor_type IN ('api_key', 'user', 'system')),
  actor_id       text,
  workflow_id    text,
  review_id      text,
  resource_type  text,
  resource_id    text,
  data           jsonb NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_org ON audit_events (org_id, id);
CREATE INDEX audit_events_workflow ON audit_events (workflow_id);

CREATE TABLE idempotency_keys (
  org_id             text NOT NULL REFERENCES organizations(id),
  api_key_id         text NOT NULL REFERENCES api_keys(id),
  key                text NOT NULL,
  request_hash       text NOT NULL,
  workflow_id        text NOT NULL,
  -- The gate's first answer once known: replayed to a request that repeats the key and the body.
  answer             jsonb,
  created_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, api_key_id, key)
);

-- Down Migration

DROP TABLE idempotency_keys;
DROP TABLE audit_events;
DROP TABLE applied_writes;
DROP TABLE reviews;
DROP TABLE gate_decisions;
DROP TABLE tasks;
DROP TABLE policy_sets;
DROP TABLE personal_tokens;
DROP TABLE users;
DROP TABLE api_keys;
DROP TABLE organizations;
