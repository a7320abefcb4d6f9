import pg from 'pg';
import pRetry from 'p-retry';
import { isSharedSession, isStalePlan, StatementNames } from './statement-names';

// Dates stay RFC 3339 strings end to end (what the API shows), and bigint counts come back as numbers.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Queryable = Pick<pg.PoolClient, 'query'>;

/** The one way code talks to PostgreSQL, be it a server or the embedded one. */
export interface Database extends Queryable {
  /**
   * Runs `work` in one transaction on one connection. Never wait on another connection from inside:
   * the embedded PostgreSQL serves one transaction at a time. `work` may run again (on a fresh connection) when
   * the connection fails before the commit is sent: keep it free of effects outside the transaction.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly url: string;
}

/** SQLSTATEs of a connection that ended or could not start: class 08, the server shutting down or starting, no slot free. */
const connectionStates = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const pgMessages = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed)/;

/**
 * Whether an error says the connection to PostgreSQL failed (it was terminated, the server restarts or
 * fails over, the network broke) rather than that the statement was wrong: a fault worth a retry on a fresh
 * connection, and a 503 if retries do not help, never a refusal of the request.
 */
export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (connectionStates.test(code) || socketCodes.has(code))) return true;
  return pgMessages.test(error.message);
}

/**
 * A fault met while COMMIT was on its way: the transaction may or may not have committed, so it is never run
 * again, and whoever asked is told that the change may have been made.
 */
export class CommitOutcomeUnknown extends Error {}

/** A connection that could not be had: nothing was sent, so anything may be sent again. */
class NoConnection extends Error {}

/** SQLSTATEs with which the server says it ended the backend, aborting the statement it ran (it did not commit). */
const endedByTheServer = /^57P0[12]$/;
const readOnly = /^\s*(SELECT|SHOW|VALUES)\b/i;

/**
 * Whether a statement on its own may be sent again after its connection failed. It commits by itself, so a reply
 * lost after the server ran it (a reset socket, "Connection terminated") leaves its outcome unknown: only a read
 * is sent again then. A statement that never left (no connection, a client already broken) or that the server
 * says it aborted may always be.
 */
function resendable(error: unknown, text: string): boolean {
  if (error instanceof NoConnection) return true;
  if (!isConnectionFault(error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && endedByTheServer.test(code)) return true;
  if (/^Client has encountered a connection error and is not queryable/.test((error as Error).message)) return true;
  return readOnly.test(text);
}

export interface DatabaseOptions {
  maxConnections?: number;
  /** How long a failed connection is retried (new connections, with backoff) before the error is thrown; default 3 s. */
  retryForMs?: number;
  /**
   * Whether statements sent often are prepared once per connection (default true). Off behind a pooler that
   * does not keep a session's prepared statements (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

export function connectDatabase(url: string, options: DatabaseOptions = {}): Database {
  const naming = options.preparedStatements !== false;
  const pool = new pg.Pool({
    ...(naming ? plannedForEachCall(url) : { connectionString: url }),
    max: options.maxConnections ?? 10,
    // A server that accepts the socket but never answers must not hold a request forever (this bounds the wait
    // for a pooled connection too).
    connectionTimeoutMillis: 10_000,
    // A connection keeps its prepared statements: one idle between bursts of load is kept for a minute (pg's default
    // is 10 s), not closed and opened again with each statement prepared anew.
    idleTimeoutMillis: 60_000,
    keepAlive: true,
  });
  // An idle connection that the server drops must not crash the process.
  pool.on('error', () => {});
  // Nor one the server ends as it opens. pg-pool takes its idle listener off a new client as it hands it out, and
  // withClient adds its own a microtask later; a FATAL that came in the same chunk as the first ReadyForQuery
  // (pg_terminate_backend on a backend that had just started) is emitted in between. With this listener the
  // client is only marked not queryable, and the statement sent on it is sent again on a fresh connection.
  pool.on('connect', (client) => client.on('error', () => {}));

  // Rides over a failover, pg_terminate_backend or a restart of a few seconds: each try takes a fresh connection.
  const retryForMs = options.retryForMs ?? 3000;
  const retried = <T>(attempt: () => Promise<T>, mayRetry: (error: unknown) => boolean) =>
    pRetry(attempt, { retries: 8, minTimeout: 50, maxTimeout: 1000, maxRetryTime: retryForMs, shouldRetry: ({ error }) => mayRetry(error) }).catch(
      (error: unknown) => {
        throw error instanceof NoConnection ? error.cause : error;
      },
    );

  const names = naming ? new StatementNames() : undefined;
  // A stale plan is refused before the statement runs (in a transaction, it aborts it): it is sent again, renamed.
  // A session that is not the connection's alone: sent again unnamed, as everything after it.
  const renamedAfterStalePlan = (error: unknown) => {
    if (!names) return false;
    if (isStalePlan(error)) names.forget();
    else if (isSharedSession(error)) names.stopNaming();
    else return false;
    return true;
  };
  const query = ((text: string | pg.QueryConfig, values?: unknown[]) =>
    retried(
      () => statementOnce(pool, names, text, values),
      (error) => renamedAfterStalePlan(error) || resendable(error, typeof text === 'string' ? text : text.text),
    )) as Queryable['query'];

  return {
    url,
    query,
    transaction: (work) =>
      retried(
        () => transactionOnce(pool, names, work),
        (error) => renamedAfterStalePlan(error) || error instanceof NoConnection || (isConnectionFault(error) && !(error instanceof CommitOutcomeUnknown)),
      ),
    close: () => pool.end(),
  };
}

/**
 * The pool's connection settings with every statement prepared by name planned for the values of each call, as an
 * unnamed one is. Left to itself, PostgreSQL switches a statement to one generic plan after five calls when that
 * plan looks no dearer than the average so far; one text serves every organization, so the plan fitted to the
 * average one walked the whole trail for a small one (an audit page of one person: 0.46 s at 10,000 events beside
 * an organization of a million, 23 ms for the large one). Naming keeps what it saves: the parse and analysis of
 * the text. Options the URL gives (`?options=-c …`) are kept: pg would let them replace ours.
 */
function plannedForEachCall(url: string): Pick<pg.PoolConfig, 'connectionString' | 'options'> {
  const ours = '-c plan_cache_mode=force_custom_plan';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: ours };
  }
  const given = parsed.searchParams.get('options');
  if (given === null) return { connectionString: url, options: ours };
  parsed.searchParams.delete('options');
  return { connectionString: parsed.toString(), options: `${given} ${ours}` };
}

async function connected(pool: pg.Pool): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    if (isConnectionFault(error)) throw new NoConnection('no connection to PostgreSQL', { cause: error });
    throw error;
  }
}

/** Lends a connection its own error listener while it is out (see transactionOnce), and destroys it if it broke. */
async function withClient<T>(pool: pg.Pool, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await connected(pool);
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    return await use(client);
  } catch (error) {
    // A statement that failed because its connection did leaves the client unusable even if no 'error' came.
    if (!broken && (isConnectionFault(error) || error instanceof CommitOutcomeUnknown)) broken = error as Error;
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

function statementOnce(pool: pg.Pool, names: StatementNames | undefined, text: string | pg.QueryConfig, values?: unknown[]) {
  return withClient(pool, (client) => send(client, names, text, values));
}

function send(client: pg.PoolClient, names: StatementNames | undefined, text: string | pg.QueryConfig, values?: unknown[]) {
  const statement = names ? names.statement(text, values) : { text, values };
  return client.query(statement.text as string, statement.values);
}

/**
 * A checked-out client is not covered by the pool's listener: a connection the server ends mid-transaction (a
 * failover, pg_terminate_backend) would otherwise crash the process with an unhandled 'error'. The statement in
 * flight fails on its own; the broken connection is then destroyed, not returned to the pool.
 */
function transactionOnce<T>(pool: pg.Pool, names: StatementNames | undefined, work: (tx: Queryable) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    const tx: Queryable = names ? { query: ((text: string | pg.QueryConfig, values?: unknown[]) => send(client, names, text, values)) as Queryable['query'] } : client;
    try {
      await client.query('BEGIN');
      const result = await work(tx);
      try {
        await client.query('COMMIT');
      } catch (error) {
        if (isConnectionFault(error)) throw new CommitOutcomeUnknown('the connection failed while the transaction committed', { cause: error });
        throw error;
      }
      return result;
    } catch (error) {
      if (!isConnectionFault(error) && !(error instanceof CommitOutcomeUnknown)) await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  });
}
