import type { FastifyInstance } from 'fastify';
import { buildApp } from '../api/app';
import { createGateClient } from '../api/catalog/gate-client';
import type { Database } from '../db/database';
import { smtpMailer } from '../domain/notify/mailer';
import type { SecretBox } from '../domain/kit/secret-box';
import { metadataDocumentRules, outboundPolicy, type Config } from './config';
import { connectTemporalClient } from './temporal';
import { tracingFor } from './tracing';

/**
 * How long the api waits for the SMTP server as it sends a set-password link (connecting, its greeting, each
 * silence): a person waits for the answer, which says when it could not be sent.
 */
const linkMailTimeoutMs = 10_000;

export interface RunningApi {
  app: FastifyInstance;
  url: string;
  stop(): Promise<void>;
}

/** Serves the api on the configured host and port, talking to Temporal at `temporalAddress`. */
export async function startApi(config: Config, db: Database, secrets: SecretBox, temporalAddress: string, temporalUiUrl = config.temporal.uiUrl): Promise<RunningApi> {
  const stopTracing = tracingFor(config, 'gatehouse-api');
  const temporal = await connectTemporalClient(config, temporalAddress).catch(async (error: unknown) => {
    await stopTracing();
    throw error;
  });
  const gate = createGateClient(temporal.client, { taskQueue: config.temporal.taskQueue });
  const mailer = config.smtp.url ? smtpMailer(config.smtp.url, config.smtp.from, { timeoutMs: linkMailTimeoutMs }) : undefined;
  const app = await buildApp({
    db,
    gate,
    publicUrl: config.publicUrl,
    mcpAllowedOrigins: config.mcpAllowedOrigins,
    logLevel: config.logLevel,
    rateLimits: config.rateLimits,
    sessions: config.sessions,
    temporalUi: temporalUiUrl ? { url: temporalUiUrl, namespace: config.temporal.namespace, roles: config.temporal.uiRoles } : undefined,
    trustProxy: config.trustProxy,
    outbound: outboundPolicy(config),
    mailer,
    secrets,
    metadataDocuments: metadataDocumentRules(config),
  });
  app.addHook('onClose', async () => mailer?.close());
  if (!config.rateLimits) app.log.warn('RATE_LIMITS=off: requests are neither counted nor refused (meant for the benchmark only)');
  // The CLI says where the api listens, in its banner (gatehouse dev) or its one line (gatehouse api): Fastify's
  // own "Server listening" log line would only repeat it, as JSON among the lines meant for people.
  const level = app.log.level;
  app.log.level = 'warn';
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await temporal.close();
    await stopTracing();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${config.port} is taken; set PORT to use another`, { cause: error });
    throw error;
  } finally {
    app.log.level = level;
  }
  return {
    app,
    url: config.publicUrl,
    async stop() {
      await app.close();
      await temporal.close();
      await stopTracing();
    },
  };
}
