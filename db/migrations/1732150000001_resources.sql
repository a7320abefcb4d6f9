-- Up Migration

-- The roster: people of the organization's team, whom tasks, events and work logs name. (Distinct from
-- `users`, the people who sign in to Gatehouse.)
CREATE TABLE team_members (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id),
  name        text NOT NULL,
  email       text,
  title       text,
  active      boolean NOT NULL DEFAULT true,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX team_members_org ON team_members (org_id, name, id);

CREATE TABLE projects (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id),
  name         text NOT NULL,
  description  text,
  status       text NOT NULL,
  owner_id     text REFERENCES team_members(id),
  start_on     date,
  due_on       date,
  tags         text[] NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  version      integer NOT NULL DEFAULT 1
);
CREATE INDEX projects_org ON projects (org_id, id);

CREATE TABLE customers (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id),
  name        text NOT NULL,
  company     text,
  email       text,
  phone       text,
  tags        text[] NOT NULL DEFAULT '{}',
  notes       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  version     integer NOT NULL DEFAULT 1
);
CREATE INDEX customers_org_id ON customers (org_id, id);
-- Incremental sync walks (updated_at, id); clock_timestamp() below keeps updated_at moving within a transaction.
CREATE INDEX customers_org_updated ON customers (org_id, updated_at, id);

CREATE TABLE meeting_ingests (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id),
  title         text NOT NULL,
  occurred_at   timestamptz NOT NULL,
  participants  text[] NOT NULL DEFAULT '{}',
  source        text,
  transcript    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX meeting_ingests_org ON meeting_ingests (org_id, id);

ALTER TABLE tasks
  ADD COLUMN project_id text REFERENCES projects(id),
  ADD COLUMN assignee_id text REFERENCES team_members(id),
  ADD COLUMN meeting_ingest_id text REFERENCES meeting_ingests(id);
CREATE INDEX tasks_org_project ON tasks (org_id, project_id, id);
CREATE INDEX tasks_org_assignee ON tasks (org_id, assignee_id, id);
CREATE INDEX tasks_org_due ON tasks (org_id, due_on, id);
CREATE INDEX tasks_meeting_ingest ON tasks (meeting_ingest_id);

CREATE TABLE events (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id),
  title         text NOT NULL,
  description   text,
  location      text,
  starts_at     timestamptz NOT NULL,
  ends_at       timestamptz NOT NULL CHECK (ends_at > starts_at),
  attendee_ids  text[] NOT NULL DEFAULT '{}',
  customer_id   text REFERENCES customers(id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  version       integer NOT NULL DEFAULT 1
);
CREATE INDEX events_org_starts ON events (org_id, starts_at, id);

CREATE TABLE products (
  id                text PRIMARY KEY,
  org_id            text NOT NULL REFERENCES organizations(id),
  name              text NOT NULL,
  sku               text,
  description       text,
  unit_price_cents  bigint NOT NULL,
  currency          text NOT NULL,
  active            boolean NOT NULL DEFAULT true,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX products_org ON products (org_id, id);

CREATE TABLE invoices (
  id           text PRIMARY KEY,
  org_id       text NOT NULL REFERENCES organizations(id),
  customer_id  text NOT NULL REFERENCES customers(id),
  number       text NOT NULL,
  status       text NOT NULL,
  issued_on    date NOT NULL,
  due_on       date NOT NULL,
  currency     text NOT NULL,
  lines        jsonb NOT NULL,
  total_cents  bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, number)
);
CREATE INDEX invoices_org ON invoices (org_id, id);
CREATE INDEX invoices_org_customer ON invoices (org_id, customer_id, id);

CREATE TABLE bookings (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES organizations(id),
  customer_id      text NOT NULL REFERENCES customers(id),
  product_id       text REFERENCES products(id),
  staff_member_id  text REFERENCES team_members(id),
  title            text NOT NULL,
  status           text NOT NULL,
  starts_at        timestamptz NOT NULL,
  ends_at          timestamptz NOT NULL CHECK (ends_at > starts_at),
  notes            text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bookings_org_starts ON bookings (org_id, starts_at, id);

CREATE TABLE expenses (
  id            text PRIMARY KEY,
  org_id        text NOT NULL REFERENCES organizations(id),
  member_id     text REFERENCES team_members(id),
  project_id    text REFERENCES projects(id),
  description   text NOT NULL,
  category      text NOT NULL,
  amount_cents  bigint NOT NULL,
  currency      text NOT NULL,
  spent_on      date NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX expenses_org ON expenses (org_id, id);

CREATE TABLE work_logs (
  id          text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id),
  member_id   text NOT NULL REFERENCES team_members(id),
  task_id     text REFERENCES tasks(id),
  project_id  text REFERENCES projects(id),
  minutes     integer NOT NULL CHECK (minutes > 0),
  worked_on   date NOT NULL,
  note        text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK (task_id IS NOT NULL OR project_id IS NOT NULL)
);
CREATE INDEX work_logs_org ON work_logs (org_id, id);

-- Down Migration

DROP TABLE work_logs;
DROP TABLE expenses;
DROP TABLE bookings;
DROP TABLE invoices;
DROP TABLE products;
DROP TABLE events;
DROP INDEX tasks_meeting_ingest;
DROP INDEX tasks_org_due;
DROP INDEX tasks_org_assignee;
DROP INDEX tasks_org_project;
ALTER TABLE tasks DROP COLUMN meeting_ingest_id, DROP COLUMN assignee_id, DROP COLUMN project_id;
DROP TABLE meeting_ingests;
DROP TABLE customers;
DROP TABLE projects;
DROP TABLE team_members;
