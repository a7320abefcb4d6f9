import { msToNumber } from '@temporalio/common/lib/time';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseEncryptionKeys, payloadKeySetting, secretsKeySetting, type EncryptionKey, type KeySetting } from './encryption-keys';
import type { PayloadKey } from './payload-codec';
import { tracingWanted } from './tracing';
import type { DeliveryRetry } from '../workflows/webhooks';
import type { OutboundRules, StrangersDocumentRules } from '../domain/notify/outbound';
import type { TrustedProxies } from '../api/app';

const duration = z
  .string()
  .trim()
  .min(1)
  .transform((value, ctx) => {
    try {
      const ms = msToNumber(/^\d+$/.test(value) ? Number(value) : (value as `${number}d`));
      if (ms > 0) return ms;
    } catch {
      // fall through to the issue below
    }
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration such as 7d, 12h or 30m` });
    return z.NEVER;
  });

/** A held write's workflow re-reads its review every 15 minutes; 30 days of that stays well inside Temporal's history limit. */
const maxReviewExpiryMs = 30 * 24 * 60 * 60 * 1000;

const emptyAsUndefined = (value: unknown) => (value === '' ? undefined : value);

const day = 24 * 60 * 60 * 1000;

/** A retention period: a duration with its unit (30d, 12h), at least `minMs`. */
const retention = (minMs: number, min: string) =>
  z
    .string()
    .regex(/^\s*\d+\s*[a-z]+\s*$/i, { message: 'needs a unit, such as 90d or 12h' })
    .pipe(duration)
    .refine((ms) => ms >= minMs, { message: `must be at least ${min}, or off` });

/** The proxy ranges @fastify/proxy-addr knows by name. */
const namedRanges = ['loopback', 'linklocal', 'uniquelocal'];

/** An address, a CIDR block (10.0.0.0/24, fd00::/8) or a named range, as Fastify's trustProxy takes them. */
function isProxyAddress(entry: string): boolean {
  if (namedRanges.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** How many proxies one request may pass at most: more is a typo, not a deployment. */
const maxProxyHops = 10;

/**
 * TRUST_PROXY: off (`false`, unset, `0`), how many proxies stand in front of the api (a hop count: the client is
 * the address the farthest of them saw), or the proxies' addresses. Never `true`: it makes the client the
 * left-most X-Forwarded-For address, which the client writes itself.
 */
function parseTrustedProxies(value: string | undefined, ctx: z.RefinementCtx): TrustedProxies {
  const setting = value?.trim();
  if (setting === undefined || setting === 'false' || setting === '0') return false;
  if (setting === 'true') {
    ctx.addIssue({
      code: 'custom',
      message:
        'true is refused: it would take the left-most X-Forwarded-For address, which the client writes itself, as the client\'s (every per-address limit could be walked around). ' +
        'Write how many proxies stand in front of the api (TRUST_PROXY=1 for one, as docker-compose.yml does) or their addresses (TRUST_PROXY=10.0.0.5,10.1.0.0/16)',
    });
    return z.NEVER;
  }
  if (/^\d+$/.test(setting)) {
    const hops = Number(setting);
    if (hops <= maxProxyHops) return hops;
    ctx.addIssue({ code: 'custom', message: `${setting} proxies in a row is not a deployment: a hop count is at most ${maxProxyHops}` });
    return z.NEVER;
  }
  const entries = setting.split(',').map((entry) => entry.trim()).filter(Boolean);
  const wrong = entries.filter((entry) => !isProxyAddress(entry));
  if (wrong.length === 0) return entries;
  ctx.addIssue({
    code: 'custom',
    message: `not a proxy's address: ${wrong.join(', ')} (a hop count such as 1, or addresses and CIDR blocks such as 10.0.0.5,10.1.0.0/16, or ${namedRanges.join(', ')})`,
  });
  return z.NEVER;
}
/** A key list (id:base64, comma-separated; the first encrypts), refused with what is wrong, never echoed. */
const encryptionKeys = (setting: KeySetting) =>
  z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        try {
          return parseEncryptionKeys(value, setting);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
  );

const environmentSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  DATABASE_URL: z.preprocess(emptyAsUndefined, z.string().optional()),
  DATABASE_PREPARED_STATEMENTS: z.enum(['on', 'off']).default('on'),
  TEMPORAL_ADDRESS: z.preprocess(emptyAsUndefined, z.string().optional()),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('gatehouse'),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  TEMPORAL_DEV_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  GATEHOUSE_DATA_DIR: z.string().default('.data'),
  TEMPORAL_CLI: z.preprocess(emptyAsUndefined, z.string().optional()),
  TEMPORAL_GRPC_COMPRESSION: z.enum(['auto', 'gzip', 'none']).default('auto'),
  TEMPORAL_WORKFLOW_TASK_POLLERS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(2).max(100).optional()),
  TEMPORAL_NON_STICKY_POLL_RATIO: z.preprocess(emptyAsUndefined, z.coerce.number().min(0).max(1).optional()),
  TEMPORAL_PRELOAD_WORKFLOW_MODULES: z.enum(['on', 'off']).default('off'),
  REVIEW_EXPIRY: duration
    .default(7 * 24 * 60 * 60 * 1000)
    .refine((ms) => ms <= maxReviewExpiryMs, { message: 'must be at most 30 days (30d)' }),
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean)),
  // The Web UI shows every organization's workflows: only these roles get links to it (comma-separated). Off unless
  // the operator opts in (one organization per deployment, say).
  TEMPORAL_UI_ROLES: z
    .string()
    .default('none')
    .transform((value, ctx) => {
      const listed = value.split(',').map((role) => role.trim()).filter((role) => role && role !== 'none');
      const unknown = listed.filter((role) => !['owner', 'admin', 'reviewer', 'member'].includes(role));
      if (unknown.length) ctx.addIssue({ code: 'custom', message: `unknown roles: ${unknown.join(', ')} (owner, admin, reviewer, member, or none)` });
      return listed as ('owner' | 'admin' | 'reviewer' | 'member')[];
    }),
  SESSION_IDLE_TIMEOUT: duration.default(2 * 60 * 60 * 1000),
  SESSION_MAX_AGE: duration.default(12 * 60 * 60 * 1000),
  TRUST_PROXY: z.preprocess(emptyAsUndefined, z.string().optional().transform(parseTrustedProxies)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // How long the call log and decided reviews are kept; `off` keeps them for good.
  // A bare number would be milliseconds and prune nearly everything: these take a unit, and keep a day at least
  // (reviews: past the longest a review may wait, so that no held write's workflow finds its review gone).
  CALL_LOG_RETENTION: z.preprocess(emptyAsUndefined, z.union([z.literal('off'), retention(day, '1d')]).default(90 * day)),
  REVIEW_RETENTION: z.preprocess(emptyAsUndefined, z.union([z.literal('off'), retention(maxReviewExpiryMs + day, '31d')]).default(365 * day)),
  // Prometheus metrics, on a port of their own (not the api's), loopback unless told otherwise.
  METRICS_HOST: z.string().default('127.0.0.1'),
  METRICS_PORT: z.preprocess(emptyAsUndefined, z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).optional()),
  TEMPORAL_METRICS_PORT: z.preprocess(emptyAsUndefined, z.union([z.literal('off'), z.coerce.number().int().min(1).max(65535)]).default(9466)),
  // Temporal payloads encrypted with these keys (id:base64, comma-separated; the first encrypts). `gatehouse dev`
  // makes one in its data folder when none is given.
  PAYLOAD_ENCRYPTION_KEYS: encryptionKeys(payloadKeySetting),
  // The secrets kept in the database (webhook and Slack signing secrets, the Slack webhook URL, the OAuth server's
  // keys) sealed with these keys (id:base64, comma-separated; the first seals). Required by `gatehouse api` and
  // `gatehouse worker`; `gatehouse dev` makes one in its data folder when none is given.
  SECRETS_ENCRYPTION_KEYS: encryptionKeys(secretsKeySetting),
  // The codec endpoint the Web UI decrypts payloads with (gatehouse dev, gatehouse codec), loopback unless told.
  CODEC_HOST: z.string().default('127.0.0.1'),
  CODEC_PORT: z.preprocess(emptyAsUndefined, z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).default(8234)),
  CODEC_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean))
    .refine((origins) => origins.every((origin) => /^https?:\/\/[^/*\s]+$/.test(origin)), {
      message: 'origins such as http://localhost:8233 (scheme, host and port; no path, no *: the codec decrypts for whoever it answers)',
    }),
  // OpenTelemetry's own variable, checked here so that a typo stops the start with a clear line (runtime/tracing.ts).
  OTEL_TRACES_EXPORTER: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .optional()
      .refine((value) => value === undefined || value.split(',').every((name) => ['otlp', 'console', 'none'].includes(name.trim())), {
        message: 'otlp, console or none (comma-separated)',
      }),
  ),
  // Outgoing requests (webhooks, Slack): public addresses only unless the operator allows private ones; loopback
  // (and plain http to it) only where asked, as `gatehouse dev` does.
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: z.enum(['true', 'false']).default('false'),
  WEBHOOK_ALLOW_LOOPBACK: z.enum(['true', 'false']).optional(),
  // Certificate authorities (a PEM file) trusted for the service's own https requests besides the system's:
  // receivers and OAuth clients' metadata documents behind an internal CA.
  OUTBOUND_CA_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
  // A delivery's attempts: the first retry after WEBHOOK_RETRY_INITIAL, each wait 4 times the last up to 5 hours,
  // WEBHOOK_MAX_ATTEMPTS in all (10: about a day); an endpoint is switched off after WEBHOOK_DISABLE_AFTER
  // deliveries in a row failed every attempt.
  WEBHOOK_RETRY_INITIAL: duration.default(5000),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(10),
  WEBHOOK_DISABLE_AFTER: z.coerce.number().int().min(1).max(1000).default(5),
  // Email to people (a held write's reviewers, escalations, a switched-off webhook, owners' alerts, and set-password
  // links, which the api then sends to the person alone): smtp://user:password@host:587 or smtps://…:465; unset, no
  // email is sent, and the console answers set-password links to the owner or admin who asked.
  SMTP_URL: z.preprocess(emptyAsUndefined, z.string().regex(/^smtps?:\/\//, { message: 'an smtp:// or smtps:// URL' }).optional()),
  SMTP_FROM: z.string().default('Gatehouse <gatehouse@localhost>'),
  WEBHOOK_TIMEOUT: duration.default(10_000).refine((ms) => ms <= 50_000, { message: 'must be at most 50s' }),
  // For the benchmark only, which measures what the accounting costs: off serves without counting or refusing.
  RATE_LIMITS: z.preprocess(emptyAsUndefined, z.enum(['on', 'off']).default('on')),
});

export interface Config {
  port: number;
  host: string;
  /** Where people and agents reach the api; review links are built from it. */
  publicUrl: string;
  databaseUrl: string | undefined;
  /** Whether statements sent often are prepared once per connection (off behind a pooler that cannot keep them). */
  databasePreparedStatements: boolean;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    devPort: number;
    uiPort: number;
    uiUrl: string | undefined;
    /** Roles whose people see links to a review's workflow in the Web UI (TEMPORAL_UI_ROLES). */
    uiRoles: ('owner' | 'admin' | 'reviewer' | 'member')[];
    cliPath: string | undefined;
    /**
     * gzip on the connections to Temporal, or none; `auto` (the default) compresses unless the server is on this
     * machine's loopback, where compressing costs CPU and saves nothing.
     */
    grpcCompression: 'auto' | 'gzip' | 'none';
    /** The worker's workflow-task pollers and their share on the task queue (worker/index.ts's defaults when not given). */
    workflowTaskPollers: number | undefined;
    nonStickyPollRatio: number | undefined;
    /** Whether the worker loads the workflows' stateless modules once per reused sandbox rather than once per run. */
    preloadWorkflowModules: boolean;
  };
  dataDir: string;
  reviewExpiryMs: number;
  /** Browser origins allowed to call /mcp besides the service's own (MCP_ALLOWED_ORIGINS, comma-separated). */
  mcpAllowedOrigins: string[];
  /** Console sessions end after this long without a request, or this long after sign-in. */
  sessions: { idleMs: number; lifetimeMs: number };
  /** Whom to believe X-Forwarded-* from (TLS ends at a proxy in front): nobody, a hop count, or the proxies' addresses. */
  trustProxy: TrustedProxies;
  logLevel: z.infer<typeof environmentSchema>['LOG_LEVEL'];
  /** The plans' request limits (RATE_LIMITS=on, the default); off only for the benchmark's comparison. */
  rateLimits: boolean;
  /**
   * Where metrics are served: Gatehouse's (port undefined: the process kind's default, see runtime/metrics-server.ts)
   * and the Temporal SDK's worker metrics (served by the SDK itself).
   */
  metrics: { host: string; port: number | 'off' | undefined; temporalPort: number | 'off' };
  /** How long the call log and decided reviews are kept (milliseconds; undefined: for good), pruned hourly. */
  retention: { callLogMs: number | undefined; reviewsMs: number | undefined };
  /**
   * Temporal payloads: the keys that encrypt them (undefined: not encrypted), and where the codec endpoint for the
   * Web UI listens, with the browser origins allowed to call it (besides the Web UI's own).
   */
  payloads: { keys: PayloadKey[] | undefined; codecHost: string; codecPort: number | 'off'; codecOrigins: string[] };
  /** The keys that seal the secrets kept in the database (undefined: not given; see runtime/stored-secrets.ts). */
  secrets: { keys: EncryptionKey[] | undefined };
  /** Whether OpenTelemetry traces are exported (the standard OTEL_* variables; see runtime/tracing.ts). */
  tracing: boolean;
  /**
   * Outgoing webhooks: where requests may go (loopback undefined: only in `gatehouse dev`), how a delivery is retried,
   * how long a receiver has to answer, and after how many failed deliveries in a row an endpoint is switched off.
   */
  webhooks: {
    allowPrivate: boolean;
    allowLoopback: boolean | undefined;
    /** OUTBOUND_CA_FILE's certificates, read at start. */
    extraCertificateAuthorities: string[] | undefined;
    retry: DeliveryRetry;
    timeoutMs: number;
    disableAfter: number;
  };
  /** Email to people through this SMTP server (undefined: none is sent), from this sender: the worker's, and the api's set-password links. */
  smtp: { url: string | undefined; from: string };
  /**
   * OAuth clients' metadata documents: fetched from public addresses only, whatever the webhooks allow; loopback
   * only under `gatehouse dev` (which sets it), never by a setting.
   */
  metadataDocuments: { allowLoopback: boolean };
}

export class ConfigError extends Error {}

/** Where the service's own requests (webhooks) may go: loopback only where allowed (`gatehouse dev` allows it). */
export function outboundPolicy(config: Config): OutboundRules {
  return {
    allowLoopback: config.webhooks.allowLoopback ?? false,
    allowPrivate: config.webhooks.allowPrivate,
    extraCertificateAuthorities: config.webhooks.extraCertificateAuthorities,
  };
}

/** Where OAuth clients' metadata documents may be fetched from: public addresses, trusting OUTBOUND_CA_FILE's authorities too. */
export function metadataDocumentRules(config: Config): StrangersDocumentRules {
  return { allowLoopback: config.metadataDocuments.allowLoopback, extraCertificateAuthorities: config.webhooks.extraCertificateAuthorities };
}

/** As the CLI checks URLs: as the service would, and on the embedded database (a developer's machine) loopback too. */
export function cliOutboundPolicy(config: Config): OutboundRules {
  return { ...outboundPolicy(config), allowLoopback: config.webhooks.allowLoopback ?? !config.databaseUrl };
}

function readCertificates(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Invalid configuration:\n  OUTBOUND_CA_FILE: cannot read ${path} (${(error as Error).message})`);
  }
}

const asMs = (value: number | 'off'): number | undefined => (value === 'off' ? undefined : value);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = environmentSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  const shownHost = e.HOST === '0.0.0.0' || e.HOST === '127.0.0.1' || e.HOST === '::' ? 'localhost' : e.HOST;
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://${shownHost}:${e.PORT}`).replace(/\/$/, ''),
    databaseUrl: e.DATABASE_URL,
    databasePreparedStatements: e.DATABASE_PREPARED_STATEMENTS === 'on',
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL,
      uiRoles: e.TEMPORAL_UI_ROLES,
      cliPath: e.TEMPORAL_CLI,
      grpcCompression: e.TEMPORAL_GRPC_COMPRESSION,
      workflowTaskPollers: e.TEMPORAL_WORKFLOW_TASK_POLLERS,
      nonStickyPollRatio: e.TEMPORAL_NON_STICKY_POLL_RATIO,
      preloadWorkflowModules: e.TEMPORAL_PRELOAD_WORKFLOW_MODULES === 'on',
    },
    dataDir: resolve(e.GATEHOUSE_DATA_DIR),
    reviewExpiryMs: e.REVIEW_EXPIRY,
    mcpAllowedOrigins: e.MCP_ALLOWED_ORIGINS,
    sessions: { idleMs: e.SESSION_IDLE_TIMEOUT, lifetimeMs: e.SESSION_MAX_AGE },
    trustProxy: e.TRUST_PROXY,
    logLevel: e.LOG_LEVEL,
    rateLimits: e.RATE_LIMITS === 'on',
    metrics: { host: e.METRICS_HOST, port: e.METRICS_PORT, temporalPort: e.TEMPORAL_METRICS_PORT },
    retention: { callLogMs: asMs(e.CALL_LOG_RETENTION), reviewsMs: asMs(e.REVIEW_RETENTION) },
    payloads: { keys: e.PAYLOAD_ENCRYPTION_KEYS, codecHost: e.CODEC_HOST, codecPort: e.CODEC_PORT, codecOrigins: e.CODEC_ALLOWED_ORIGINS },
    secrets: { keys: e.SECRETS_ENCRYPTION_KEYS },
    tracing: tracingWanted(env),
    webhooks: {
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === 'true',
      allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK === undefined ? undefined : e.WEBHOOK_ALLOW_LOOPBACK === 'true',
      extraCertificateAuthorities: e.OUTBOUND_CA_FILE === undefined ? undefined : [readCertificates(e.OUTBOUND_CA_FILE)],
      retry: { initialIntervalMs: e.WEBHOOK_RETRY_INITIAL, backoffCoefficient: 4, maximumIntervalMs: 5 * 60 * 60 * 1000, maximumAttempts: e.WEBHOOK_MAX_ATTEMPTS },
      timeoutMs: e.WEBHOOK_TIMEOUT,
      disableAfter: e.WEBHOOK_DISABLE_AFTER,
    },
    smtp: { url: e.SMTP_URL, from: e.SMTP_FROM },
    metadataDocuments: { allowLoopback: false },
  };
}
