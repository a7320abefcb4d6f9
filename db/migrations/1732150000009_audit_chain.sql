-- Up Migration

-- The audit ledger (domain/gate/audit-chain.ts, audit-ledger.ts): each event's content digest, written with the
-- event by the service; its place in the organization's chain and the chain's hash, written by the sealer.
ALTER TABLE audit_events
  ADD COLUMN digest bytea,
  ADD COLUMN seq bigint,
  ADD COLUMN chain bytea;
CREATE UNIQUE INDEX audit_events_chain ON audit_events (org_id, seq) WHERE seq IS NOT NULL;
CREATE INDEX audit_events_unsealed ON audit_events (org_id, id) WHERE seq IS NULL;

-- Where each organization's chain ends: the last sealed event, its place and hash; and where it began. Events
-- written before this migration have no digest: each organization's chain starts after them.
CREATE TABLE audit_chain_heads (
  org_id         text PRIMARY KEY REFERENCES organizations(id),
  seq            bigint NOT NULL,
  chain          bytea NOT NULL,
  last_event_id  text NOT NULL,
  started_after  text NOT NULL DEFAULT '',
  sealed_at      timestamptz NOT NULL DEFAULT now()
);
INSERT INTO audit_chain_heads (org_id, seq, chain, last_event_id, started_after)
  SELECT org_id, 0, decode(repeat('00', 32), 'hex'), max(id), max(id) FROM audit_events GROUP BY org_id;

-- Down Migration

DROP TABLE audit_chain_heads;
DROP INDEX audit_events_unsealed;
DROP INDEX audit_events_chain;
ALTER TABLE audit_events DROP COLUMN chain, DROP COLUMN seq, DROP COLUMN digest;
