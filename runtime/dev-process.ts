import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectDatabase } from '../db/database';
import { migrate } from '../db/migrate';
import { createDemoOrganization, type DemoOrganization } from './demo';
import { countOrganizations } from '../domain/identity/organizations';
import { seedOrganization } from '../data-import/seed';
import { startApi } from './api-process';
import type { Config } from './config';
import { embeddedConnection } from './database';
import { setTimeout as sleep } from 'node:timers/promises';
import { clearDevState, readRunningDevState, writeDevState, type DevState } from './dev-state';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres';
import { findTemporalCli } from './temporal-binary';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server';
import { serveMetrics } from './metrics-server';
import { installTemporalRuntime, temporalMetricsUrl } from './temporal';
import { serveCodec } from './codec-server';
import { keysInFile, payloadKeySetting, secretsKeySetting } from './encryption-keys';
import { EncryptionCodec } from './payload-codec';
import { devSecretsKeysFile, sealStoredSecretsAtStart, secretBoxOf } from './stored-secrets';
import { tracingFor } from './tracing';
import { startWorker } from './worker-process';

export interface DevService {
  apiUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  databaseDescription: string;
  /** Where Prometheus reads Gatehouse's metrics, and the Temporal SDK's worker metrics; undefined when off. */
  metricsUrl: string | undefined;
  temporalMetricsUrl: string | undefined;
  /** The codec endpoint the Web UI decrypts payloads with; undefined when not served. */
  codecUrl: string | undefined;
  /** Where the payload keys come from: PAYLOAD_ENCRYPTION_KEYS, or the data folder's file. */
  payloadKeysFrom: string;
  /** Where the keys sealing the stored secrets come from: SECRETS_ENCRYPTION_KEYS, or the data folder's file. */
  secretsKeysFrom: string;
  /** Present on the first start only: the demo organization and its tokens, shown once. */
  demo: DemoOrganization | undefined;
  /** Settles when the service stops by itself (the worker failed, say). */
  stopped: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Everything in one process on embedded defaults: the Temporal dev server as a child process (state in
 * the data folder), the embedded PostgreSQL unless DATABASE_URL is set, the worker and the api.
 */
export async function startDev(given: Config, log: (line: string) => void): Promise<DevService> {
  mkdirSync(given.dataDir, { recursive: true });
  const running = await waitForCliToFinish(given.dataDir);
  if (running) throw new Error(`gatehouse dev is already running with ${given.dataDir} (pid ${running.pid}) at ${running.apiUrl}`);
  // Keys made once in the data folder when none are given: the payloads' and the stored secrets'.
  const payloadKeysFile = join(given.dataDir, 'payload-keys');
  const secretsKeysFile = devSecretsKeysFile(given.dataDir);
  const keyed: Config = {
    ...given,
    payloads: { ...given.payloads, keys: given.payloads.keys ?? keysInFile(payloadKeysFile, payloadKeySetting) },
    secrets: { keys: given.secrets.keys ?? keysInFile(secretsKeysFile, secretsKeySetting) },
  };
  const secrets = secretBoxOf(keyed.secrets.keys!);
  // Development: webhooks may go to a receiver on this machine, over plain http, and an OAuth client's metadata
  // document may be served on it (over https: OUTBOUND_CA_FILE names its authority).
  const config: Config = {
    ...keyed,
    webhooks: { ...keyed.webhooks, allowLoopback: keyed.webhooks.allowLoopback ?? true },
    metadataDocuments: { allowLoopback: true },
  };
  installTemporalRuntime(config, { workerMetrics: true });

  const cleanups: (() => Promise<void>)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  try {
    cleanups.push(tracingFor(config, 'gatehouse'));
    let temporalAddress = config.temporal.address;
    let temporalUiUrl = config.temporal.uiUrl;
    const codec = await serveDevCodec(config, log);
    if (codec) cleanups.push(() => codec.close());
    if (!temporalAddress) {
      const cliPath = await findTemporalCli({ configured: config.temporal.cliPath, log });
      if (!cliPath) {
        throw new Error(
          'No Temporal CLI found: install Go (then this command builds it), put `temporal` on PATH, set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to a running server',
        );
      }
      const server: TemporalDevServer = await startTemporalDevServer({
        cliPath,
        dbFile: join(config.dataDir, 'temporal.db'),
        port: config.temporal.devPort,
        uiPort: config.temporal.uiPort,
        namespace: config.temporal.namespace,
        uiCodecEndpoint: codec?.url,
      });
      cleanups.push(() => server.stop());
      temporalAddress = server.address;
      temporalUiUrl = server.uiUrl;
    }

    let databaseUrl = config.databaseUrl;
    let embedded: EmbeddedPostgres | undefined;
    if (!databaseUrl) {
      embedded = await startEmbeddedPostgres(config.dataDir);
      cleanups.push(() => embedded!.stop());
      databaseUrl = embedded.url;
    }
    await migrate(databaseUrl);
    const db = connectDatabase(databaseUrl, embedded ? embeddedConnection : { preparedStatements: config.databasePreparedStatements });
    cleanups.push(() => db.close());
    await sealStoredSecretsAtStart(db, secrets, log);

    const demo = (await countOrganizations(db)) === 0 ? await createDemoOrganization(db, config.publicUrl) : undefined;
    if (demo) await seedOrganization(db, demo.organization, { size: 'small' });

    const worker = await startWorker(config, db, secrets, temporalAddress);
    cleanups.push(() => worker.stop());
    const api = await startApi(config, db, secrets, temporalAddress, temporalUiUrl);
    cleanups.push(() => api.stop());
    const metrics = await serveMetrics(config, 'dev', db, log);
    if (metrics) cleanups.push(() => metrics.close());

    writeDevState(config.dataDir, {
      owner: 'dev',
      pid: process.pid,
      databaseUrl,
      temporalAddress,
      apiUrl: `${config.publicUrl}/api`,
      startedAt: new Date().toISOString(),
    });
    cleanups.push(async () => clearDevState(config.dataDir));

    return {
      apiUrl: `${config.publicUrl}/api`,
      temporalAddress,
      temporalUiUrl,
      databaseDescription: embedded ? `${databaseUrl} (embedded, data in ${join(config.dataDir, 'pgdata')})` : 'DATABASE_URL',
      metricsUrl: metrics?.url,
      temporalMetricsUrl: temporalMetricsUrl(config),
      codecUrl: codec?.url,
      payloadKeysFrom: given.payloads.keys ? 'PAYLOAD_ENCRYPTION_KEYS' : payloadKeysFile,
      secretsKeysFrom: given.secrets.keys ? 'SECRETS_ENCRYPTION_KEYS' : secretsKeysFile,
      demo,
      stopped: worker.done,
      stop: cleanUp,
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

/** The codec endpoint for the dev server's Web UI, unless CODEC_PORT=off or its port is taken (then logged). */
async function serveDevCodec(config: Config, log: (line: string) => void) {
  const { keys, codecHost, codecPort, codecOrigins } = config.payloads;
  if (!keys || codecPort === 'off') return undefined;
  const uiPort = config.temporal.uiPort;
  const uiOrigins = config.temporal.uiUrl ? [new URL(config.temporal.uiUrl).origin] : [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`];
  try {
    return await serveCodec({ codec: new EncryptionCodec(keys), host: codecHost, port: codecPort, allowedOrigins: [...uiOrigins, ...codecOrigins] });
  } catch (error) {
    log(`payload codec not served: ${codecHost}:${codecPort} ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (set CODEC_PORT, or CODEC_PORT=off); the Web UI shows payloads encrypted`);
    return undefined;
  }
}

/** A CLI command may hold the embedded database for a moment; a running dev holds it until stopped. */
async function waitForCliToFinish(dataDir: string): Promise<DevState | undefined> {
  for (let waited = 0; waited < 15_000; waited += 200) {
    const running = readRunningDevState(dataDir);
    if (running?.owner !== 'cli') return running;
    await sleep(200);
  }
  return readRunningDevState(dataDir);
}
