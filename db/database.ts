import pg from 'pg';

// Dates stay RFC 3339 strings end to end (what the API shows), and bigint counts come back as numbers.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export type Queryable = Pick<pg.PoolClient, 'query'>;

/** The one way code talks to PostgreSQL, be it a server or the embedded one. */
export interface Database extends Queryable {
  /**
   * Runs `work` in one transaction on one connection. Never wait on another connection from inside:
   * the embedded PostgreSQL serves one transaction at a time.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  readonly url: string;
}

export function connectDatabase(url: string, options: { maxConnections?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString: url, max: options.maxConnections ?? 10 });
  // An idle connection that the server drops must not crash the process.
  pool.on('error', () => {});
  return {
    url,
    query: pool.query.bind(pool) as Queryable['query'],
    async transaction(work) {
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
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (!broken) await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
