-- Up Migration

-- Outgoing events (domain/webhooks): the endpoints an organization registered, the events written for them (an
-- outbox, filled in the transaction of what each event describes), and each delivery of an event to an endpoint.

CREATE TABLE webhook_endpoints (
  id             text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES organizations(id),
  url            text NOT NULL,
  description    text,
  event_types    text[] NOT NULL,
  -- The signing secret (Standard Webhooks, whsec_…): kept, since every delivery is signed with it.
  secret         text NOT NULL,
  enabled        boolean NOT NULL DEFAULT true,
  -- Why it was switched off: by a person, or by the service after deliveries kept failing.
  disabled_reason text,
  -- Deliveries that failed every attempt since the last one that arrived.
  failure_streak integer NOT NULL DEFAULT 0,
  created_by     text REFERENCES users(id),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, id);

-- The outbox. An event's id is the id of the audit event it comes from (or its own, for events no audit event
-- records): receivers de-duplicate on it. relayed_at: handed to Temporal (workflows/webhooks.ts).
CREATE TABLE webhook_events (
  seq            bigserial UNIQUE,
  id             text PRIMARY KEY,
  org_id         text NOT NULL REFERENCES organizations(id),
  type           text NOT NULL,
  data           jsonb NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  claimed_until  timestamptz,
  relayed_at     timestamptz
);
CREATE INDEX webhook_events_waiting ON webhook_events (seq) WHERE relayed_at IS NULL;

CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES organizations(id),
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id         text NOT NULL REFERENCES webhook_events(id),
  -- A person's redelivery of an earlier delivery: the same event, sent again.
  redelivery_of    text REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  response_status  integer,
  last_error       text,
  last_attempt_at  timestamptz,
  delivered_at     timestamptz,
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- A redelivery is handed to Temporal by the relay, like an event.
  claimed_until    timestamptz,
  started_at       timestamptz
);
CREATE UNIQUE INDEX webhook_deliveries_first ON webhook_deliveries (event_id, endpoint_id) WHERE redelivery_of IS NULL;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_waiting ON webhook_deliveries (id) WHERE started_at IS NULL;

-- What an audit event means to a webhook receiver: the event type it is, or null.
CREATE FUNCTION webhook_event_type(audit audit_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'review' THEN 'review.created'
    WHEN audit.type = 'gate.decided' AND audit.data->>'decision' = 'deny' THEN 'write.denied'
    WHEN audit.type IN ('review.approved', 'review.denied') THEN 'review.decided'
    WHEN audit.type IN ('review.expired', 'write.applied', 'write.failed') THEN audit.type
    WHEN audit.type = 'api_key.created' THEN 'key.created'
    WHEN audit.type = 'api_key.revoked' THEN 'key.revoked'
    WHEN audit.type = 'policy.updated' THEN 'policy.changed'
  END
$$;

-- Every audit event a webhook receiver may want goes to the outbox in the same transaction, whoever wrote it (the
-- api, the worker, the CLI): when an enabled endpoint of the organization asks for its type, and always for a held
-- write (its reviewers are told of it through the same relay).
CREATE FUNCTION webhook_outbox_from_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type text := webhook_event_type(NEW);
BEGIN
  IF event_type IS NULL THEN
    RETURN NULL;
  END IF;
  IF event_type <> 'review.created' AND NOT EXISTS (
    SELECT 1 FROM webhook_endpoints e WHERE e.org_id = NEW.org_id AND e.enabled AND event_type = ANY (e.event_types)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_events (id, org_id, type, data, created_at)
  VALUES (
    NEW.id,
    NEW.org_id,
    event_type,
    jsonb_strip_nulls(jsonb_build_object(
      'actor', jsonb_build_object('type', NEW.actor_type, 'id', NEW.actor_id),
      'workflow_id', NEW.workflow_id,
      'review_id', NEW.review_id,
      'resource_type', NEW.resource_type,
      'resource_id', NEW.resource_id,
      'decision', CASE NEW.type WHEN 'review.approved' THEN 'approved' WHEN 'review.denied' THEN 'denied' END
    )) || (NEW.data - 'decision' - 'interface' - 'policyIds')
      || CASE WHEN NEW.data ? 'policyIds' THEN jsonb_build_object('policy_ids', NEW.data->'policyIds') ELSE '{}' END,
    NEW.created_at
  );
  RETURN NULL;
END
$$;
CREATE TRIGGER audit_events_webhook_outbox AFTER INSERT ON audit_events
  FOR EACH ROW EXECUTE FUNCTION webhook_outbox_from_audit();

-- Down Migration

DROP TRIGGER audit_events_webhook_outbox ON audit_events;
DROP FUNCTION webhook_outbox_from_audit();
DROP FUNCTION webhook_event_type(audit_events);
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
