import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { buildApp, type AppDependencies, type TrustedProxies } from '../../api/app';
import { createGateClient } from '../../api/catalog/gate-client';
import { connectDatabase, type Database } from '../../db/database';
import type { Access } from '../../domain/identity/abilities';
import type { GatedWriteRequest } from '../../domain/gate/contract';
import { createApiKey } from '../../domain/identity/api-keys';
import { createOrganization, type Organization, type OrganizationSettings } from '../../domain/identity/organizations';
import { createPersonalToken, createUser } from '../../domain/identity/people';
import { setPolicySet } from '../../domain/policy-sets/versions';
import type { SessionRules } from '../../domain/identity/sessions';
import { bundleWorkflows, createWorker } from '../../worker';
import type { Tracing } from '../../runtime/tracing';
import { encryptingDataConverter, type PayloadKey } from '../../runtime/payload-codec';
import type { RetentionRules } from '../../domain/usage/retention';
import { connectMcp } from './mcp';
import { createScratchDatabase } from '../../db/scratch-database';
import type { OutboundRules } from '../../domain/notify/outbound';
import { startOutboxRelay } from '../../runtime/outbox-relay';
import { smtpMailer } from '../../domain/notify/mailer';
import type { DeliveryRetry } from '../../workflows/webhooks';
import type { SecretBox } from '../../domain/kit/secret-box';
import { testSecrets } from './secrets';

/** The tests' receivers listen on loopback, as a developer's would. */
const loopbackAllowed: OutboundRules = { allowLoopback: true, allowPrivate: false };

let runtimeInstalled = false;
let sequence = 0;

export const publicUrl = 'http://gatehouse.test';

/** The example policy in which a task's title picks Allow, Review ("review…") or Deny ("deny…"). */
export const testPolicy = readFileSync(new URL('../../policy/examples/decide-by-title.cedar', import.meta.url), 'utf8');

/**
 * The policy of the review tests: writes allowed, "review…" titles held for one person, and "big…" task creates
 * held for two people's approval (@approvals).
 */
export const quorumPolicy = `
@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("two-people-for-big-tasks") @decision("review") @approvals("2") @reason("A big task needs two people's approval")
permit (principal, action == Action::"tasks.create", resource) when { resource has title && resource.title like "big*" };

@id("review-when-asked") @decision("review") @reason("The title asks for a review")
permit (principal, action, resource) when { resource has title && resource.title like "review*" };
`;

export interface TestOrganization {
  organization: Organization;
  readWriteToken: string;
  readOnlyToken: string;
  reviewerToken: string;
  memberToken: string;
  /** A tasks.create request as the read-write key would hand it to the workflow. */
  taskRequest(title: string): GatedWriteRequest;
  /** A read-write key holding only the abilities named. */
  keyWith(abilities: string[], access?: Access): Promise<string>;
}

export interface Harness {
  db: Database;
  /** What the app and the worker seal stored secrets with (the tests' key unless the options give a box). */
  secrets: SecretBox;
  app: FastifyInstance;
  temporal: Client;
  taskQueue: string;
  worker: Worker;
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  createOrganization(settings?: OrganizationSettings & { policy?: string }): Promise<TestOrganization>;
  /** Stops the worker (held workflows wait in Temporal) and starts a fresh one on the same task queue. */
  restartWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  /** Serves the app on a free local port (the first time) and answers its base URL. */
  listen(): Promise<string>;
  /** The SDK's MCP client, connected with this token to the served app; closed with the harness. */
  mcp(token: string): Promise<McpClient>;
  close(): Promise<void>;
}

/** The real thing per test file: PostgreSQL, the Temporal dev server, a worker on its own task queue, the app. */
export interface HarnessOptions {
  reviewExpiryMs?: number;
  reviewRecheckMs?: number;
  /** How long the api waits for a gated write's first answer. */
  answerTimeoutMs?: number;
  /** The app's clock for request limits (the minute, the organization's day); real time by default. */
  clock?: () => Date;
  /** Console sessions and the sign-in throttle (the app's defaults otherwise). */
  sessions?: SessionRules;
  /** TRUST_PROXY: a hop count, or the proxies' addresses (nobody by default). */
  trustProxy?: TrustedProxies;
  /**
   * The per-address limits' namespace: apps with the same one share their counts. Each harness has its own by default
   * (test files share one database, and inject from one address).
   */
  addressLimitsNamespace?: string;
  temporalUi?: AppDependencies['temporalUi'];
  /** What the worker's retention runs prune (nothing by default). */
  retention?: RetentionRules;
  /** Traces on: the api's client and the worker get Temporal's OpenTelemetry plugin (the workflows are bundled with it). */
  tracing?: Tracing;
  /** Payloads encrypted with these keys (the api's client and the worker alike). */
  payloadKeys?: PayloadKey[];
  /**
   * Webhooks on: the worker delivers them (to loopback, as in development) and an outbox relay runs, on a database
   * of the harness's own (a relay hands every organization's events to its own worker). With `smtpUrl`, email goes
   * out there: the worker's, and the api's set-password links (as SMTP_URL configures both).
   */
  webhooks?: { retry?: Partial<DeliveryRetry>; disableAfter?: number; smtpUrl?: string };
  /**
   * Served at its own public URL, http://localhost:<a free port> (OAuth: the issuer and the resources are that
   * URL, and clients and the browser reach it there), rather than at http://gatehouse.test for `inject`.
   */
  servedAtLocalhost?: boolean;
  /**
   * Where the service's own requests may go (default: loopback, as a developer's receivers listen). OAuth clients'
   * metadata documents take its loopback and its certificate authorities, never its private ranges.
   */
  outbound?: OutboundRules;
  /** What the app and the worker seal stored secrets with (default: the tests' fixed key, test/support/secrets.ts). */
  secrets?: SecretBox;
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Quick retries for tests: 100 ms, then 200 ms, 400 ms…, three attempts in all. */
export const testDeliveryRetry: DeliveryRetry = { initialIntervalMs: 100, backoffCoefficient: 2, maximumIntervalMs: 1000, maximumAttempts: 3 };

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
    runtimeInstalled = true;
  }
  const secrets = options.secrets ?? testSecrets;
  const ownDatabase = options.webhooks ? await createScratchDatabase('webhooks', process.env.TEST_DATABASE_ADMIN_URL) : undefined;
  const db = connectDatabase(ownDatabase?.url ?? inject('databaseUrl'), { maxConnections: 10 });
  const taskQueue = `test-${process.pid}-${Date.now()}-${sequence++}`;
  const temporalAddress = inject('temporalAddress');
  // The api's client as production makes it (runtime/temporal.ts): over the native connection.
  const clientConnection = await NativeConnection.connect({ address: temporalAddress });
  const plugins = options.tracing ? [options.tracing.temporal] : [];
  const dataConverter = options.payloadKeys ? encryptingDataConverter(options.payloadKeys) : undefined;
  const temporal = new Client({ connection: clientConnection, plugins, dataConverter });
  const workerConnection = await NativeConnection.connect({ address: temporalAddress });
  // A bundle of its own where the worker's differs from the shared one: with tracing's interceptors, or with the
  // failure converter that encryption brings into the sandbox.
  const workflowBundle =
    options.tracing || dataConverter
      ? { code: (await bundleWorkflows(plugins, { failureConverterPath: dataConverter?.failureConverterPath })).code }
      : { codePath: inject('workflowBundlePath') };

  const newWorker = () =>
    createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue,
      db,
      secrets,
      reviewExpiryMs: options.reviewExpiryMs ?? 60 * 60 * 1000,
      reviewRecheckMs: options.reviewRecheckMs,
      retention: options.retention,
      workflowBundle,
      plugins,
      dataConverter,
      webhooks: {
        policy: loopbackAllowed,
        publicUrl,
        timeoutMs: 5000,
        disableAfter: options.webhooks?.disableAfter ?? 5,
        mailer: options.webhooks?.smtpUrl ? smtpMailer(options.webhooks.smtpUrl, 'Gatehouse <gatehouse@gatehouse.test>') : undefined,
      },
    });
  let worker = await newWorker();
  let running: Promise<void> | undefined = worker.run();
  const stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    running = undefined;
  };
  const startWorker = async () => {
    worker = await newWorker();
    running = worker.run();
  };

  const retry = { ...testDeliveryRetry, ...options.webhooks?.retry };
  const relay = options.webhooks ? startOutboxRelay({ db, client: temporal, taskQueue, retry, everyMs: 100 }) : undefined;
  const gate = createGateClient(temporal, { taskQueue, answerTimeoutMs: options.answerTimeoutMs });
  const appMailer = options.webhooks?.smtpUrl ? smtpMailer(options.webhooks.smtpUrl, 'Gatehouse <gatehouse@gatehouse.test>', { timeoutMs: 5000 }) : undefined;
  const localPort = options.servedAtLocalhost ? await freePort() : undefined;
  const appUrl = localPort ? `http://localhost:${localPort}` : publicUrl;
  let baseUrl: string | undefined;
  const mcpClients: McpClient[] = [];
  const app = await buildApp({
    db,
    gate,
    publicUrl: appUrl,
    logLevel: 'silent',
    clock: options.clock,
    sessions: options.sessions,
    trustProxy: options.trustProxy,
    addressLimitsNamespace: options.addressLimitsNamespace ?? `${taskQueue}:`,
    temporalUi: options.temporalUi,
    consoleDir: inject('consoleDir'),
    outbound: options.outbound ?? loopbackAllowed,
    mailer: appMailer,
    secrets,
    metadataDocuments: {
      allowLoopback: (options.outbound ?? loopbackAllowed).allowLoopback,
      extraCertificateAuthorities: options.outbound?.extraCertificateAuthorities,
    },
  });

  const harness: Harness = {
    db,
    secrets,
    app,
    temporal,
    taskQueue,
    get worker() {
      return worker;
    },
    request({ token, headers, ...rest }) {
      return app.inject({ ...rest, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
    },
    async createOrganization(settings = {}) {
      const slug = `org-${Date.now().toString(36)}-${(sequence++).toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
      const organization = await createOrganization(db, { slug, name: `Test ${slug}`, plan: 'business', ...settings });
      await setPolicySet(db, organization.id, settings.policy ?? testPolicy, 'test');
      const readWrite = await createApiKey(db, { orgId: organization.id, label: 'test agent', access: 'read_write' });
      const readOnly = await createApiKey(db, { orgId: organization.id, label: 'test reader', access: 'read' });
      const reviewer = await createUser(db, { orgId: organization.id, email: `reviewer@${slug}.test`, role: 'reviewer' });
      const member = await createUser(db, { orgId: organization.id, email: `member@${slug}.test`, role: 'member' });
      return {
        organization,
        readWriteToken: readWrite.token,
        readOnlyToken: readOnly.token,
        reviewerToken: (await createPersonalToken(db, reviewer)).token,
        memberToken: (await createPersonalToken(db, member)).token,
        taskRequest: (title) => ({
          orgId: organization.id,
          orgSlug: organization.slug,
          operation: 'tasks.create',
          input: { title, status: 'todo', priority: 'normal', tags: [] },
          interface: 'rest',
          apiKey: { id: readWrite.key.id, label: readWrite.key.label, access: 'read_write', abilities: readWrite.key.abilities },
        }),
        async keyWith(abilities, access = 'read_write') {
          return (await createApiKey(db, { orgId: organization.id, label: `narrow ${abilities.join(',')}`, access, abilities })).token;
        },
      };
    },
    async restartWorker() {
      await stopWorker();
      await startWorker();
    },
    stopWorker,
    startWorker,
    async listen() {
      if (!baseUrl && localPort) {
        await app.listen({ port: localPort, host: 'localhost' });
        baseUrl = appUrl;
      }
      if (!baseUrl) {
        await app.listen({ port: 0, host: '127.0.0.1' });
        baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      }
      return baseUrl;
    },
    async mcp(token) {
      const client = await connectMcp(await harness.listen(), token);
      mcpClients.push(client);
      return client;
    },
    async close() {
      for (const client of mcpClients) await client.close().catch(() => {});
      await app.close();
      appMailer?.close();
      await relay?.stop();
      await stopWorker();
      await workerConnection.close();
      await clientConnection.close();
      await db.close();
      await ownDatabase?.drop();
    },
  };
  return harness;
}

/** Body of a JSON answer. */
export function json<T = any>(response: LightMyRequestResponse): T {
  return response.json() as T;
}
