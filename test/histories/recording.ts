// What every recorder of workflow histories stands on (record.ts, record-changesets.ts, record-notify.ts,
// record-old-worker.ts): a Temporal dev server, a fresh PostgreSQL database, a client and a worker connection; and
// how a history is written for test/workflows/replay.test.ts to read back.
import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import { connectDatabase, type Database } from '../../db/database';
import { createScratchDatabase } from '../../db/scratch-database';
import { findTemporalCli } from '../../runtime/temporal-binary';
import { startTemporalDevServer } from '../../runtime/temporal-dev-server';

export interface Recording {
  db: Database;
  client: Client;
  workerConnection: NativeConnection;
  /** Closes the connections and the database, stops the server and drops the database. */
  close(): Promise<void>;
}

/** The ground a recorder runs on; `database` names its scratch database. */
export async function startRecording(database: string): Promise<Recording> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const cliPath = await findTemporalCli({ configured: process.env.TEMPORAL_CLI });
  if (!cliPath) throw new Error('needs the Temporal CLI');
  const temporal = await startTemporalDevServer({ cliPath, headless: true });
  const scratch = await createScratchDatabase(database, process.env.TEST_DATABASE_ADMIN_URL);
  const db = connectDatabase(scratch.url);
  const connection = await Connection.connect({ address: temporal.address });
  const workerConnection = await NativeConnection.connect({ address: temporal.address });
  return {
    db,
    client: new Client({ connection }),
    workerConnection,
    async close() {
      await workerConnection.close();
      await connection.close();
      await db.close();
      await temporal.stop();
      await scratch.drop();
    },
  };
}

/** Writes a run's history where the replay test reads it. */
export async function writeHistory(client: Client, workflowId: string, file: URL): Promise<void> {
  writeFileSync(file, `${JSON.stringify(historyAsJson(await client.workflow.getHandle(workflowId).fetchHistory()), null, 1)}\n`);
}

/**
 * protobufjs's own JSON form (longs, enums and bytes as strings), which History.fromObject reads back. The SDK's
 * historyToJSON would write Temporal's standard form, but fails here: npm installs a separate protobufjs for
 * @temporalio/common and @temporalio/proto, and the one does not recognize the other's types.
 */
function historyAsJson(history: protos.temporal.api.history.v1.IHistory): unknown {
  const { History } = protos.temporal.api.history.v1;
  return History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
}
