-- Up Migration

-- The agents' calls counted by hour: the Agent Command Center's counts (each key's day, the charts of the last 24
-- hours and 7 days) sum at most a few rows an hour here instead of counting every call of the range, which at a
-- year of a busy organization's log is hundreds of thousands of rows a read (domain/usage/call-counts.ts).
-- Kept exact by the triggers below, in the transaction that writes, prunes or changes call log rows, whichever
-- process writes them (an api of the previous version during a rolling deployment too).
CREATE TABLE call_log_hours (
  org_id      text NOT NULL REFERENCES organizations(id),
  -- The key's id, or '*' for every agent's calls together (keys and people's tokens).
  agent       text NOT NULL,
  -- The hour of UTC the calls ended in; a zone whose hours are not UTC's counts the ends of its ranges from call_log.
  hour        timestamptz NOT NULL,
  outcome     text NOT NULL,
  status      integer NOT NULL,
  calls       integer NOT NULL,
  PRIMARY KEY (org_id, agent, hour, outcome, status)
);
COMMENT ON TABLE call_log_hours IS 'The REST and MCP calls of call_log counted by organization, key (or * for all), hour of UTC, outcome and status; kept by triggers on call_log';

-- What one statement added to or removed from the call log, counted (transition tables are seen by the trigger's
-- own function only, hence each query twice). Rows are changed in the order of their keys, so that two statements
-- never wait on each other's rows in opposite orders; an hour's count that falls to 0 goes.
CREATE FUNCTION call_log_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO call_log_hours AS h (org_id, agent, hour, outcome, status, calls)
    SELECT c.org_id, a.agent, date_trunc('hour', c.created_at, 'UTC'), c.outcome, c.status, -count(*)
    FROM old_rows c CROSS JOIN LATERAL (VALUES ('*'), (c.api_key_id)) AS a(agent)
    WHERE c.interface IN ('rest', 'mcp') AND a.agent IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (org_id, agent, hour, outcome, status) DO UPDATE SET calls = h.calls + EXCLUDED.calls;
    DELETE FROM call_log_hours h
    USING (SELECT DISTINCT c.org_id, a.agent, date_trunc('hour', c.created_at, 'UTC') AS hour, c.outcome, c.status
           FROM old_rows c CROSS JOIN LATERAL (VALUES ('*'), (c.api_key_id)) AS a(agent)
           WHERE c.interface IN ('rest', 'mcp') AND a.agent IS NOT NULL) AS changed
    WHERE (h.org_id, h.agent, h.hour, h.outcome, h.status) = (changed.org_id, changed.agent, changed.hour, changed.outcome, changed.status) AND h.calls = 0;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO call_log_hours AS h (org_id, agent, hour, outcome, status, calls)
    SELECT c.org_id, a.agent, date_trunc('hour', c.created_at, 'UTC'), c.outcome, c.status, count(*)
    FROM new_rows c CROSS JOIN LATERAL (VALUES ('*'), (c.api_key_id)) AS a(agent)
    WHERE c.interface IN ('rest', 'mcp') AND a.agent IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5
    ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (org_id, agent, hour, outcome, status) DO UPDATE SET calls = h.calls + EXCLUDED.calls;
  END IF;
  RETURN NULL;
END $$;

-- One trigger per event: PostgreSQL allows transition tables only on triggers of a single event.
CREATE TRIGGER call_log_counted_insert AFTER INSERT ON call_log REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION call_log_counted();
CREATE TRIGGER call_log_counted_update AFTER UPDATE ON call_log REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION call_log_counted();
CREATE TRIGGER call_log_counted_delete AFTER DELETE ON call_log REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION call_log_counted();

-- The log written so far, counted once; the triggers above hold writers back until this commits.
INSERT INTO call_log_hours (org_id, agent, hour, outcome, status, calls)
SELECT c.org_id, a.agent, date_trunc('hour', c.created_at, 'UTC'), c.outcome, c.status, count(*)
FROM call_log c CROSS JOIN LATERAL (VALUES ('*'), (c.api_key_id)) AS a(agent)
WHERE c.interface IN ('rest', 'mcp') AND a.agent IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;

-- Down Migration

DROP TRIGGER call_log_counted_delete ON call_log;
DROP TRIGGER call_log_counted_update ON call_log;
DROP TRIGGER call_log_counted_insert ON call_log;
DROP FUNCTION call_log_counted();
DROP TABLE call_log_hours;
