import { Command } from 'commander';
import { migrate } from '../../db/migrate';
import { startApi } from '../../runtime/api-process';
import { loadConfig, type Config } from '../../runtime/config';
import { openDatabase } from '../../runtime/database';
import { readRunningDevState } from '../../runtime/dev-state';
import type { DemoPerson } from '../../runtime/demo';
import { startDev, type DevService } from '../../runtime/dev-process';
import { startWorker } from '../../runtime/worker-process';
import { serveMetrics } from '../../runtime/metrics-server';
import { temporalMetricsUrl } from '../../runtime/temporal';
import { requireSecretsKeys, sealStoredSecretsAtStart, secretBoxOf, secretsLine } from '../../runtime/stored-secrets';
import { emit, fail, wantsJson } from '../output';

/** Resolves once SIGINT or SIGTERM arrives, or the given promise settles (a process that stopped by itself). */
function untilStopped(stoppedByItself?: Promise<unknown>): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    stoppedByItself?.then(
      () => resolve('stopped'),
      (error) => {
        process.stderr.write(`gatehouse: ${(error as Error).message}\n`);
        process.exitCode = 1;
        resolve('failed');
      },
    );
  });
}

/** A separate api or worker needs shared servers: the embedded database belongs to one process. */
function requireServers(config: Config, what: string): string {
  if (!config.databaseUrl && !readRunningDevState(config.dataDir)) {
    throw new Error(`gatehouse ${what} needs DATABASE_URL (a PostgreSQL server); gatehouse dev runs an embedded one for you`);
  }
  if (!config.temporal.address) {
    throw new Error(`gatehouse ${what} needs TEMPORAL_ADDRESS (host:port of a Temporal server); gatehouse dev starts one for you`);
  }
  return config.temporal.address;
}

const logLine = (line: string) => process.stderr.write(`gatehouse: ${line}\n`);

function payloadsLine(config: Config): string {
  const { keys } = config.payloads;
  return keys
    ? `Temporal payloads encrypted with key "${keys[0]!.id}"${keys.length > 1 ? ` (${keys.length - 1} more for decrypting)` : ''}`
    : 'Temporal payloads are NOT encrypted: set PAYLOAD_ENCRYPTION_KEYS (gatehouse temporal payload-key makes one), the same on every api and worker';
}

function devBanner(service: DevService): string[] {
  const lines = [
    'Gatehouse is running. Stop it with Ctrl-C.',
    '',
    `  Console           ${service.apiUrl.replace(/\/api$/, '')}/   (people sign in here)`,
    `  REST API          ${service.apiUrl}   (discovery: GET ${service.apiUrl}/v1/me)`,
    `  API playground    ${service.apiUrl}/docs   (signed-in people)`,
    `  MCP server        ${service.apiUrl.replace(/\/api$/, '')}/mcp   (an API key, or a sign-in: OAuth)`,
    `  Temporal Web UI   ${service.temporalUiUrl ?? '(set TEMPORAL_UI_URL to show it here)'}`,
    `  Temporal server   ${service.temporalAddress}`,
    `  PostgreSQL        ${service.databaseDescription}`,
    `  Metrics           ${service.metricsUrl ?? '(off)'}   (Prometheus; Temporal worker: ${service.temporalMetricsUrl ?? 'off'})`,
    `  Payload codec     ${service.codecUrl ?? '(off)'}   (Temporal payloads are encrypted; key in ${service.payloadKeysFrom})`,
    `  Stored secrets    sealed (webhook and Slack secrets, OAuth keys; key in ${service.secretsKeysFrom})`,
  ];
  const { demo } = service;
  if (demo) {
    lines.push(
      '',
      `First start: created the demo organization "${demo.organization.slug}" (${demo.organization.name}).`,
      'These tokens and links are shown this once; copy them now:',
      '',
      `  read-write API key       ${demo.readWriteToken}`,
      `  read-only API key        ${demo.readOnlyToken}`,
      `  reviewer personal token  ${demo.reviewer.token}   (${demo.reviewer.email})`,
      '',
      'Set a password to sign in to the console (organization "demo"; each link works once, until ' + demo.owner.linkExpiresAt + '):',
      `  owner     ${demo.owner.email.padEnd(24)} ${demo.owner.setPasswordUrl}`,
      `  reviewer  ${demo.reviewer.email.padEnd(24)} ${demo.reviewer.setPasswordUrl}`,
      '',
      'Try it:',
      `  curl -s ${service.apiUrl}/v1/tasks -H "Authorization: Bearer <read-write key>" \\`,
      `       -H 'Content-Type: application/json' -d '{"title": "Call the supplier", "status": "todo"}'`,
    );
  }
  return lines;
}

function linkJson(person: DemoPerson) {
  return { email: person.email, role: person.role, set_password_url: person.setPasswordUrl, link_expires_at: person.linkExpiresAt };
}

export function serveCommands(): Command[] {
  const dev = new Command('dev')
    .description('Run everything on embedded defaults: Temporal dev server, embedded PostgreSQL, worker and api')
    .action(async (_options, command: Command) => {
      let service: DevService;
      try {
        const config = loadConfig();
        service = await startDev(config, (line) => process.stderr.write(`${line}\n`));
      } catch (error) {
        fail(command, error);
      }
      emit(
        command,
        {
          api_url: service.apiUrl,
          temporal_ui_url: service.temporalUiUrl ?? null,
          temporal_address: service.temporalAddress,
          database: service.databaseDescription,
          metrics_url: service.metricsUrl ?? null,
          temporal_metrics_url: service.temporalMetricsUrl ?? null,
          codec_url: service.codecUrl ?? null,
          payload_keys_from: service.payloadKeysFrom,
          secrets_keys_from: service.secretsKeysFrom,
          demo: service.demo
            ? {
                organization: service.demo.organization,
                read_write_token: service.demo.readWriteToken,
                read_only_token: service.demo.readOnlyToken,
                owner: linkJson(service.demo.owner),
                reviewer: { ...linkJson(service.demo.reviewer), token: service.demo.reviewer.token },
              }
            : null,
        },
        devBanner(service),
      );
      await untilStopped(service.stopped);
      if (!wantsJson(command)) process.stderr.write('Stopping…\n');
      await service.stop();
    });

  const api = new Command('api')
    .description('Run the api alone, against DATABASE_URL and the Temporal server at TEMPORAL_ADDRESS')
    .action(async (_options, command: Command) => {
      try {
        const config = loadConfig();
        const address = requireServers(config, 'api');
        const secrets = secretBoxOf(requireSecretsKeys(config, 'gatehouse api'));
        const { db } = await openDatabase(config);
        await sealStoredSecretsAtStart(db, secrets, logLine);
        const running = await startApi(config, db, secrets, address);
        const metrics = await serveMetrics(config, 'api', db, logLine);
        emit(
          command,
          { api_url: `${running.url}/api`, metrics_url: metrics?.url ?? null },
          [`Gatehouse api listening at ${running.url}/api`, `Metrics at ${metrics?.url ?? '(off)'}`, payloadsLine(config), secretsLine(secrets)],
        );
        await untilStopped();
        await running.stop();
        await metrics?.close();
        await db.close();
      } catch (error) {
        fail(command, error);
      }
    });

  const worker = new Command('worker')
    .description('Run a worker alone (gated-write workflows and activities), against DATABASE_URL and TEMPORAL_ADDRESS')
    .action(async (_options, command: Command) => {
      try {
        const config = loadConfig();
        const address = requireServers(config, 'worker');
        const secrets = secretBoxOf(requireSecretsKeys(config, 'gatehouse worker'));
        const { db } = await openDatabase(config);
        await sealStoredSecretsAtStart(db, secrets, logLine);
        const running = await startWorker(config, db, secrets, address);
        const metrics = await serveMetrics(config, 'worker', db, logLine);
        emit(
          command,
          { task_queue: config.temporal.taskQueue, temporal_address: address, metrics_url: metrics?.url ?? null, temporal_metrics_url: temporalMetricsUrl(config) ?? null },
          [
            `Gatehouse worker polling task queue "${config.temporal.taskQueue}" at ${address}`,
            `Metrics at ${metrics?.url ?? '(off)'}; the Temporal SDK's at ${temporalMetricsUrl(config) ?? '(off)'}`,
            payloadsLine(config),
            secretsLine(secrets),
          ],
        );
        await untilStopped(running.done);
        await running.stop();
        await metrics?.close();
        await db.close();
      } catch (error) {
        fail(command, error);
      }
    });

  const migrateCommand = new Command('migrate')
    .description('Apply pending database migrations (api, worker and dev also do this on start)')
    .action(async (_options, command: Command) => {
      try {
        const config = loadConfig();
        const opened = await openDatabase(config, { migrate: false });
        try {
          const result = await migrate(opened.db.url);
          emit(command, result, result.applied.length ? [`Applied:`, ...result.applied.map((name) => `  ${name}`)] : 'The schema is up to date.');
        } finally {
          await opened.db.close();
        }
      } catch (error) {
        fail(command, error);
      }
    });

  return [dev, api, worker, migrateCommand];
}
