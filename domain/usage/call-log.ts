import type { Database, Queryable } from '../../db/database';
import type { QueryResultRow } from 'pg';
import type { Interface } from '../gate/contract';
import { newId } from '../kit/ids';
import { agentCallsIn, withoutJit } from './call-counts';
import { decodeCursor, toPage, type Page } from '../kit/pagination';

/** Where a call came in: the agents' interfaces (REST, MCP) or the people's console. */
export type CallInterface = Interface | 'console';

/** One call of an operation, as the call log keeps it. */
export interface CallRecord {
  orgId: string;
  /** The key that called (agents, scripts); null for a person's token. */
  apiKeyId: string | null;
  /** The person who called (a personal token, a console session); null for keys. */
  userId: string | null;
  interface: CallInterface;
  /** The catalog operation (tasks.create), or the name asked for when it matches none (an unknown MCP tool). */
  operation: string;
  /** The MCP tool called; null over REST. */
  tool: string | null;
  /** The HTTP status (REST); for MCP tool calls 200, or the status of the error the tool answered. */
  status: number;
  /** ok, applied, pending_review, policy_denied, or the error code. */
  outcome: string;
  latencyMs: number;
}

/** A call as the log shows it. */
export interface LoggedCall {
  id: string;
  api_key_id: string | null;
  user_id: string | null;
  interface: CallInterface;
  operation: string;
  tool: string | null;
  status: number;
  outcome: string;
  latency_ms: number;
  created_at: string;
}

/** A call's row as the log keeps it: the id and the time are those of the end of the call. */
export interface EndedCall {
  entry: CallRecord;
  ended: { id: string; at: Date };
}

/**
 * One INSERT of one call. The id and the time are those of the end of the call, not of the row reaching the
 * database: rows written in the background still sort in the order the calls ended.
 */
export async function recordCall(db: Queryable, entry: CallRecord, ended = { id: newId('call'), at: new Date() }): Promise<void> {
  await recordCalls(db, [{ entry, ended }]);
}

/**
 * One INSERT of several calls (one statement whatever their number, so it is prepared once).
 *
 * It commits without waiting for the WAL to reach the disk (synchronous_commit off for its own transaction, set by
 * the statement itself, as the limits' count does): a crash of the PostgreSQL server may forget the rows of its last
 * fraction of a second. The log is written off the request path and gives way under pressure anyway; the wait for
 * the disk was most of what a row cost. Nothing a caller was told depends on it.
 */
export async function recordCalls(db: Queryable, calls: EndedCall[]): Promise<void> {
  if (calls.length === 0) return;
  const column = <T>(pick: (call: EndedCall) => T) => calls.map(pick);
  await db.query(
    `INSERT INTO call_log (id, org_id, api_key_id, user_id, interface, operation, tool, status, outcome, latency_ms, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::float8[], $11::timestamptz[])
     WHERE (SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL`,
    [
      column(({ ended }) => ended.id),
      column(({ entry }) => entry.orgId),
      column(({ entry }) => entry.apiKeyId),
      column(({ entry }) => entry.userId),
      column(({ entry }) => entry.interface),
      column(({ entry }) => entry.operation),
      column(({ entry }) => entry.tool),
      column(({ entry }) => entry.status),
      column(({ entry }) => entry.outcome),
      column(({ entry }) => entry.latencyMs),
      column(({ ended }) => ended.at),
    ],
  );
}

export interface ListCallsInput {
  api_key_id?: string;
  interface?: CallInterface;
  limit: number;
  cursor?: string;
}

/** The organization's calls, newest first; a cursor is the last id of the previous page. */
export async function listCalls(db: Queryable, orgId: string, input: ListCallsInput): Promise<Page<LoggedCall>> {
  const after = decodeCursor(input.cursor);
  const { rows } = await db.query(
    `SELECT id, api_key_id, user_id, interface, operation, tool, status, outcome, latency_ms, created_at
     FROM call_log
     WHERE org_id = $1
       AND ($2::text IS NULL OR api_key_id = $2)
       AND ($3::text IS NULL OR interface = $3)
       AND ($4::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM call_log WHERE org_id = $1 AND id = $4))
     ORDER BY created_at DESC, id DESC
     LIMIT $5`,
    [orgId, input.api_key_id ?? null, input.interface ?? null, after ?? null, input.limit + 1],
  );
  return toPage(rows.map(callFromRow), input.limit);
}

function callFromRow(row: QueryResultRow): LoggedCall {
  return {
    id: row.id,
    api_key_id: row.api_key_id,
    user_id: row.user_id,
    interface: row.interface,
    operation: row.operation,
    tool: row.tool,
    status: row.status,
    outcome: row.outcome,
    latency_ms: row.latency_ms,
    created_at: (row.created_at as Date).toISOString(),
  };
}

export interface CallLogWriter {
  /** Queues the row and returns at once: the caller's answer never waits for it, nor fails with it. */
  record(entry: CallRecord): void;
  /** Writes the rows queued and waits for those still being written, before the database closes. */
  drain(): Promise<void>;
}

/** At most this many rows queued or being written; beyond it (the database is struggling) rows are dropped, not queued. */
const maxInFlight = 1000;
/** Rows wait at most this long to be written with the calls that end beside them, and go at once when this many. */
const gatherMs = 20;
const mostPerStatement = 200;
/**
 * At most this many statements at once, so the log never takes more than two of the pool's connections (rows wait
 * their turn meanwhile, and go together): a slow log, a lock, a migration, holds back the log, not the requests.
 */
const statementsAtOnce = 2;

/** Text as PostgreSQL takes it: no NUL, which it refuses in text (a tool's name comes as the client sent it). */
const storable = (text: string | null) => (text === null ? null : text.replaceAll('\0', '\uFFFD'));

/**
 * Writes the call log off the request path, once the answer is on its way: the rows of the calls that end within
 * a few milliseconds of each other go in one statement (a busy api writes one statement for many calls). A
 * statement the database refuses is tried again row by row, so that one row it will not take costs only that row;
 * failures go to `onError`, never to the caller.
 */
export function callLogWriter(db: Queryable, onError: (error: unknown) => void): CallLogWriter {
  let queued: EndedCall[] = [];
  let timer: NodeJS.Timeout | undefined;
  let statements = 0;
  let rowsWriting = 0;
  let dropped = 0;
  const idle: Array<() => void> = [];
  const write = async (calls: EndedCall[]) => {
    try {
      await recordCalls(db, calls);
    } catch (error) {
      if (calls.length === 1) throw error;
      for (const call of calls) await recordCalls(db, [call]).catch(onError);
    }
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    while (queued.length > 0 && statements < statementsAtOnce) {
      const calls = queued.slice(0, mostPerStatement);
      queued = queued.slice(calls.length);
      statements++;
      rowsWriting += calls.length;
      void write(calls)
        .catch(onError)
        .finally(() => {
          statements--;
          rowsWriting -= calls.length;
          // What queued while the database was busy goes now, together.
          if (queued.length > 0) flush();
          else if (statements === 0) for (const resolve of idle.splice(0)) resolve();
        });
    }
  };
  return {
    record(entry) {
      if (queued.length + rowsWriting >= maxInFlight) {
        if (dropped === 0) onError(new Error(`call log: ${maxInFlight} rows still being written; dropping rows until it catches up`));
        dropped++;
        return;
      }
      if (dropped > 0) {
        onError(new Error(`call log: ${dropped} rows were dropped while the database caught up`));
        dropped = 0;
      }
      const row = { ...entry, operation: storable(entry.operation)!, tool: storable(entry.tool) };
      queued.push({ entry: row, ended: { id: newId('call'), at: new Date() } });
      if (queued.length >= mostPerStatement) flush();
      else timer ??= setTimeout(flush, gatherMs);
    },
    async drain() {
      flush();
      if (statements > 0 || queued.length > 0) await new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}

/** How an agent's call ended, as people filter it: a read answered, a write applied, held or denied, a refusal, our error. */
export const callOutcomes = ['ok', 'applied', 'held', 'denied', 'refused', 'error'] as const;
export type CallOutcomeCategory = (typeof callOutcomes)[number];

/** A logged call's outcome as people filter it (callOutcomes), in SQL over call_log c. */
export const outcomeCategorySql = `CASE WHEN c.outcome = 'ok' THEN 'ok' WHEN c.outcome = 'applied' THEN 'applied'
  WHEN c.outcome = 'pending_review' THEN 'held' WHEN c.outcome = 'policy_denied' THEN 'denied'
  WHEN c.status >= 500 THEN 'error' ELSE 'refused' END`;

export interface AgentCall {
  id: string;
  api_key_id: string | null;
  api_key_label: string | null;
  interface: Interface;
  operation: string;
  outcome: CallOutcomeCategory;
  code: string;
  status: number;
  latency_ms: number;
  created_at: string;
}

/** The agents' calls (REST and MCP; people's console calls are not theirs), newest first, filtered as people ask. */
export async function listAgentCalls(
  db: Queryable,
  orgId: string,
  input: { api_key_id?: string; interface?: Interface; outcome?: CallOutcomeCategory; limit: number; cursor?: string },
): Promise<Page<AgentCall>> {
  const after = decodeCursor(input.cursor);
  const { rows } = await db.query(
    `SELECT c.id, c.api_key_id, k.label AS api_key_label, c.interface, c.operation, ${outcomeCategorySql} AS category, c.outcome, c.status,
            c.latency_ms, c.created_at
     FROM call_log c LEFT JOIN api_keys k ON k.id = c.api_key_id
     WHERE c.org_id = $1 AND c.interface IN ('rest', 'mcp')
       AND ($2::text IS NULL OR c.api_key_id = $2)
       AND ($3::text IS NULL OR c.interface = $3)
       AND ($4::text IS NULL OR ${outcomeCategorySql} = $4)
       AND ($5::text IS NULL OR (c.created_at, c.id) < (SELECT created_at, id FROM call_log WHERE org_id = $1 AND id = $5))
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT $6`,
    [orgId, input.api_key_id ?? null, input.interface ?? null, input.outcome ?? null, after ?? null, input.limit + 1],
  );
  return toPage(
    rows.map((row) => ({
      id: row.id,
      api_key_id: row.api_key_id,
      api_key_label: row.api_key_label,
      interface: row.interface,
      operation: row.operation,
      outcome: row.category,
      code: row.outcome,
      status: row.status,
      latency_ms: row.latency_ms,
      created_at: (row.created_at as Date).toISOString(),
    })),
    input.limit,
  );
}

export interface AgentDay {
  api_key_id: string;
  label: string;
  access: string;
  state: 'active' | 'revoked' | 'expired';
  last_used_at: string | null;
  calls_today: number;
  applied_today: number;
  held_today: number;
  denied_today: number;
  /** The key's calls today as a share of the organization's daily budget (0–1). */
  budget_share: number;
  /** Set when the key is a client a person connected over OAuth: the client's id. */
  oauth_client_id: string | null;
}

/**
 * Each key's day, in the organization's time zone: its calls, and its writes applied, held and denied. Counted
 * from the call log's hours (agentCallsIn): a few rows an hour per key, however busy the day.
 */
export async function agentDays(db: Database, organization: { id: string; timezone: string }, dailyBudget: number): Promise<AgentDay[]> {
  const today = agentCallsIn({ orgId: 'k.org_id', apiKeyId: 'k.id', from: `date_trunc('day', now() AT TIME ZONE $2::text) AT TIME ZONE $2::text`, to: `'infinity'::timestamptz` });
  const byKey = `SELECT k.id, k.label, k.access, k.last_used_at, k.revoked_at, k.expires_at <= now() AS expired, k.oauth_client_id,
            day.calls, day.applied, day.held, day.denied
     FROM api_keys k
     CROSS JOIN LATERAL (
       SELECT COALESCE(sum(c.calls), 0)::int AS calls, COALESCE(sum(c.calls) FILTER (WHERE c.outcome = 'applied'), 0)::int AS applied,
              COALESCE(sum(c.calls) FILTER (WHERE c.outcome = 'pending_review'), 0)::int AS held,
              COALESCE(sum(c.calls) FILTER (WHERE c.outcome = 'policy_denied'), 0)::int AS denied
       FROM (${today}) AS c) AS day
     WHERE k.org_id = $1
     ORDER BY k.revoked_at IS NOT NULL, day.calls DESC, k.label`;
  const { rows } = await withoutJit(db, (tx) => tx.query(byKey, [organization.id, organization.timezone]));
  return rows.map((row) => ({
    api_key_id: row.id,
    label: row.label,
    access: row.access,
    state: row.revoked_at ? 'revoked' : row.expired ? 'expired' : 'active',
    last_used_at: row.last_used_at ? (row.last_used_at as Date).toISOString() : null,
    calls_today: row.calls,
    applied_today: row.applied,
    held_today: row.held,
    denied_today: row.denied,
    budget_share: dailyBudget > 0 ? row.calls / dailyBudget : 0,
    oauth_client_id: row.oauth_client_id ?? null,
  }));
}
