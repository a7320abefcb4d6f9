import pg from 'pg';
import pRetry from 'p-retry';

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

/** Marks a fault met while COMMIT was on its way: the transaction may or may not have committed, so it is never rerun. */
class CommitOutcomeUnknown extends Error {}

export interface DatabaseOptions {
  maxConnections?: number;
  /** How long a failed connection is retried (new connections, with backoff) before the error is thrown; default 3 s. */
  retryForMs?: number;
}

export function connectDatabase(url: string, options: DatabaseOptions = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    // A server that accepts the socket but never answers must not hold a request forever.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // An idle connection that the server drops must not crash the process.
  pool.on('error', () => {});

  // Rides over a failover, pg_terminate_backend or a restart of a few seconds: each try takes a fresh connection.
  const retryForMs = options.retryForMs ?? 3000;
  const retried = <T>(attempt: () => Promise<T>) =>
    pRetry(attempt, {
      retries: 8,
      minTimeout: 50,
      maxTimeout: 1000,
      maxRetryTime: retryForMs,
      shouldRetry: ({ error }) => isConnectionFault(error) && !(error instanceof CommitOutcomeUnknown),
    }).catch((error: unknown) => {
      throw error instanceof CommitOutcomeUnknown ? error.cause : error;
    });

  const query = ((...args: Parameters<pg.Pool['query']>) =>
    // A statement on its own: a connection fault means it was never sent, or the server ended its backend and so
    // rolled it back. (The call log, counters and claims the api writes this way are idempotent or tolerate it.)
    retried(() => (pool.query as (...a: unknown[]) => Promise<unknown>)(...args))) as Queryable['query'];

  return {
    url,
    query,
    transaction: (work) => retried(() => transactionOnce(pool, work)),
    close: () => pool.end(),
  };
}

async function transactionOnce<T>(pool: pg.Pool, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out client is not covered by the pool's listener: a connection the server ends mid-transaction
  // (a failover, pg_terminate_backend) would otherwise crash the process with an unhandled 'error'. The query
  // in flight fails on its own; the broken connection is then destroyed, not returned to the pool.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    try {
      await client.query('COMMIT');
    } catch (error) {
      if (isConnectionFault(error)) throw new CommitOutcomeUnknown('the connection failed during COMMIT', { cause: error });
      throw error;
    }
    return result;
  } catch (error) {
    if (!broken && !(error instanceof CommitOutcomeUnknown)) await client.query('ROLLBACK').catch(() => {});
    // A statement that failed because its connection did leaves the client unusable even if no 'error' came.
    if (!broken && (isConnectionFault(error) || error instanceof CommitOutcomeUnknown)) broken = error as Error;
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}
