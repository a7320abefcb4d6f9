import fastifyCookie from '@fastify/cookie';
import { trace } from '@opentelemetry/api';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Database } from '../db/database';
import { AppError } from '../domain/kit/errors';
import { addressLimitOptions } from './address-limits';
import { createCallPipeline } from './catalog/call';
import type { GateClient } from './catalog/gate-client';
import { catalog } from './catalog/index';
import { builtConsole, consolePages, sendConsolePage, wantsConsolePage } from './console/pages';
import { consoleApi, signedInOnly } from './console/plugin';
import { verifyApprovalPasskey } from './catalog/review-passkeys';
import { decisionLinkRoutes } from './decision-links/routes';
import type { SessionRules } from '../domain/identity/sessions';
import type { TemporalUiLinks } from './console/session-routes';
import { mcpRoute } from './mcp/route';
import { oauthApi, resourceMetadataUrl } from './oauth/plugin';
import { apiDocs } from './rest/docs';
import { clientErrorAnswer, errorBody, httpError, keepReadingTheBody } from './rest/http';
import { restApi } from './rest/plugin';
import { slackInteractions } from './slack/plugin';
import { publicDocumentsOnly, publicOnly, type OutboundRules, type StrangersDocumentRules } from '../domain/notify/outbound';
import type { Mailer } from '../domain/notify/mailer';
import { createAddressCounters } from '../domain/usage/address-counters';
import type { SecretBox } from '../domain/kit/secret-box';

export interface AppDependencies {
  db: Database;
  gate: GateClient;
  /** Where callers reach this service, e.g. http://localhost:3000. */
  publicUrl: string;
  /** Browser origins allowed to call /mcp besides the service's own. */
  mcpAllowedOrigins?: string[];
  logLevel?: string;
  bodyLimitBytes?: number;
  /** Where "now" comes from for the request limits (the minute, the organization's day); tests move it. */
  clock?: () => Date;
  /** The plan's request limits; off (false) only to measure their cost in the benchmark. */
  rateLimits?: boolean;
  /** How long console sessions live (default: 2 hours idle, 12 hours at most). */
  sessions?: SessionRules;
  /**
   * Whom to believe X-Forwarded-* from (TLS ends at a proxy: the session cookie is Secure when it says https, and
   * the per-address limits count the client's address): nobody (false), a hop count, or the proxies' addresses.
   */
  trustProxy?: TrustedProxies;
  /**
   * What the per-address limits' counters in PostgreSQL are prefixed with: apps with the same prefix share them, as
   * every api of a deployment does (the default, none). Test files share one database and one address: each
   * test file's app has its own.
   */
  addressLimitsNamespace?: string;
  /** The Temporal Web UI, for links from a review to its workflow, shown to these roles only (it shows every organization). */
  temporalUi?: TemporalUiLinks;
  /** The built console (default: web/dist in this package). */
  consoleDir?: string;
  /** Where webhooks and Slack messages may go (default: public addresses only). */
  outbound?: OutboundRules;
  /** Email to people (SMTP_URL): set-password links are sent to their person alone; absent, they are answered to whoever asked. */
  mailer?: Mailer;
  /** Seals and opens the secrets kept in the database (SECRETS_ENCRYPTION_KEYS). */
  secrets: SecretBox;
  /**
   * Where OAuth clients' metadata documents may be fetched from (default: public addresses only; loopback under
   * `gatehouse dev`). Never the private ranges webhooks may be opened to.
   */
  metadataDocuments?: StrangersDocumentRules;
}

/** TRUST_PROXY: nobody, how many proxies stand in front of the api, or the proxies' addresses and CIDR blocks. */
export type TrustedProxies = false | number | string[];

/**
 * Fastify's trustProxy for TRUST_PROXY. A hop count believes the right-most X-Forwarded-For entries up to it (each
 * appended by a proxy), never the entries left of them (the client's own words); and only when the socket's peer is
 * on this host or a private network, where a deployment's proxies are (docker-compose.yml's network). A client that
 * reaches the api from a public address, past the proxies, is counted as its own address, whatever it writes.
 */
function fastifyTrustProxy(trusted: TrustedProxies | undefined): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trusted === 'number') return (address, hop) => hop < trusted && (hop > 0 || onPrivateNetwork(address));
  return trusted ?? false;
}

/** Loopback, private (RFC 1918, unique local) and link-local addresses, where a deployment's own proxies stand. */
const privateNetworks = (() => {
  const list = new BlockList();
  for (const [network, prefix] of [['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16]] as const) {
    list.addSubnet(network, prefix, 'ipv4');
  }
  list.addAddress('::1', 'ipv6');
  list.addSubnet('fc00::', 7, 'ipv6');
  list.addSubnet('fe80::', 10, 'ipv6');
  return list;
})();

function onPrivateNetwork(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address;
  const family = isIPv4(plain) ? 'ipv4' : isIPv6(plain) ? 'ipv6' : undefined;
  return family !== undefined && privateNetworks.check(plain, family);
}

export const defaultSessionPolicy: SessionRules = { idleMs: 2 * 60 * 60 * 1000, lifetimeMs: 12 * 60 * 60 * 1000 };
const consoleBuild = fileURLToPath(new URL('../web/dist', import.meta.url));

/** How long /readyz waits for each of its checks. */
const readinessTimeoutMs = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** The whole HTTP service as a Fastify instance; the entry point only listens, tests `inject`. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: deps.logLevel ?? 'info' },
    // Per-request lines would drown what matters; failures are logged where they are handled.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimitBytes ?? 1024 * 1024,
    // While the api stops, requests still arriving on open connections are refused below, in the envelope.
    return503OnClosing: false,
    trustProxy: fastifyTrustProxy(deps.trustProxy),
    // What Fastify refuses before routing (a malformed percent-encoding, an over-long path segment) and what
    // Node's parser refuses before Fastify (headers over 16 KB) are answered in the envelope like any refusal.
    frameworkErrors: (error, _request, reply) => {
      const refusal = httpError(error);
      void (reply as FastifyReply).status(refusal.status).send(errorBody(refusal));
    },
    clientErrorHandler: (error, socket) => {
      if ((error as { code?: string }).code === 'ECONNRESET' || socket.destroyed) return;
      // As Node does: no answer of ours on a socket whose previous (pipelined) answer is already under way.
      const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
      if (socket.writable && !answering) socket.end(clientErrorAnswer(error as { code?: string }));
      socket.destroySoon();
    },
    // A client may take this long to send a request (headers and body), no longer: a refused body is read to its
    // end (keepReadingTheBody), and this bounds a client that trickles it.
    requestTimeout: 60_000,
  });

  const parseJson = app.getDefaultJsonParser('error', 'error');
  // JSON only: a text/plain body is refused (415) rather than read as a string.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // An empty body is an empty input (approve without a comment), not broken JSON.
    if ((body as string).trim() === '') return done(null, undefined);
    void parseJson(request, body as string, done);
  });
  app.setErrorHandler((error, request, reply) => {
    const appError = httpError(error);
    keepReadingTheBody(request, reply);
    // Refusals are answers, not incidents: only what we failed at is logged.
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    return reply.status(appError.status).send(errorBody(appError));
  });
  // A request that reaches a stopping api (on a kept-alive connection, behind a proxy) is refused as every refusal
  // is, and the connection closed: the client or the proxy sends it to another api, a write with its Idempotency-Key.
  let stopping = false;
  app.addHook('preClose', (done) => {
    stopping = true;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!stopping) return done();
    void reply
      .header('connection', 'close')
      .status(503)
      .send(errorBody(new AppError('unavailable', 'This api is stopping; send the request again (a write with the same Idempotency-Key)')));
  });
  // With traces on (runtime/tracing.ts), the HTTP instrumentation's span of a request is named by its route, as
  // OpenTelemetry's conventions ask ("POST /api/v1/:family"), not by its bare method.
  app.addHook('onRequest', (request, _reply, done) => {
    const span = trace.getActiveSpan();
    const route = request.routeOptions.url;
    if (span?.isRecording() && route) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    done();
  });
  const consoleDir = builtConsole(deps.consoleDir ?? consoleBuild);
  app.setNotFoundHandler((request, reply) => {
    // The console's pages route in the browser: any page address serves the app, which shows the page.
    if (wantsConsolePage(request)) return sendConsolePage(reply, consoleDir);
    return reply.status(404).send(errorBody(new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}; the API is under /api`)));
  });

  // Liveness: the process is up and answers. Readiness: what a gated write needs answers too (a load balancer
  // or an orchestrator sends traffic only to a ready api, and restarts only one that is not alive).
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const [database, temporal] = await Promise.all([
      withTimeout(deps.db.query('SELECT 1'), readinessTimeoutMs).then(
        () => undefined,
        (error: Error) => `PostgreSQL does not answer: ${error.message.split('\n')[0]}`,
      ),
      deps.gate.notReady(readinessTimeoutMs),
    ]);
    const problems = [database, temporal].filter((problem) => problem !== undefined);
    const checks = { database: database ?? 'ok', temporal: temporal ?? 'ok' };
    if (problems.length === 0) return { status: 'ready', checks };
    return reply.status(503).send(errorBody(new AppError('unavailable', `Not ready: ${problems.join('; ')}`, { checks })));
  });
  const apiBaseUrl = `${deps.publicUrl}/api`;
  const sessions = deps.sessions ?? defaultSessionPolicy;
  const pipeline = createCallPipeline({
    db: deps.db,
    gate: deps.gate,
    apiBaseUrl,
    mcpResource: `${deps.publicUrl}/mcp`,
    publicUrl: deps.publicUrl,
    outbound: deps.outbound ?? publicOnly,
    mailer: deps.mailer,
    secrets: deps.secrets,
    sessions,
    clock: deps.clock,
    rateLimits: deps.rateLimits,
    log: (error, message) => app.log.error({ err: error }, message),
  });
  app.addHook('onClose', () => pipeline.close());
  const counters = createAddressCounters(deps.db);
  app.addHook('onClose', () => counters.close());
  const addressLimits = addressLimitOptions(counters, deps.addressLimitsNamespace);
  await app.register(fastifyCookie);
  await app.register(consolePages, { dir: consoleDir });
  await app.register(apiDocs, { catalog, apiBaseUrl, guard: signedInOnly({ db: deps.db, sessions, publicUrl: deps.publicUrl }) });
  await app.register(consoleApi, { prefix: '/console/api', db: deps.db, pipeline, publicUrl: deps.publicUrl, sessions, temporalUi: deps.temporalUi, addressLimits });
  await app.register(decisionLinkRoutes, {
    prefix: '/console/api/decision-links',
    db: deps.db,
    gate: deps.gate,
    publicUrl: deps.publicUrl,
    sessions,
    verifyPasskey: (tx, check) => verifyApprovalPasskey(tx, check, deps.publicUrl),
    addressLimits,
  });
  await app.register(restApi, { prefix: '/api', pipeline, apiBaseUrl, resourceMetadataUrl: resourceMetadataUrl(deps.publicUrl, 'api') });
  await app.register(mcpRoute, {
    pipeline,
    db: deps.db,
    apiBaseUrl,
    publicUrl: deps.publicUrl,
    allowedOrigins: deps.mcpAllowedOrigins ?? [],
    resourceMetadataUrl: resourceMetadataUrl(deps.publicUrl, 'mcp'),
  });
  await app.register(slackInteractions, { db: deps.db, secrets: deps.secrets, gate: deps.gate, publicUrl: deps.publicUrl, outbound: deps.outbound ?? publicOnly });
  await app.register(oauthApi, {
    db: deps.db,
    secrets: deps.secrets,
    publicUrl: deps.publicUrl,
    metadataDocuments: deps.metadataDocuments ?? publicDocumentsOnly,
    sessions,
    sendPage: (reply) => sendConsolePage(reply, consoleDir),
    addressLimits,
    reviewsChanged: (workflowIds) => deps.gate.reviewsChanged(workflowIds),
  });
  return app;
}

