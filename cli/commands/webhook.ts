import { Command } from 'commander';
import { findOrganization } from '../../domain/identity/organizations';
import { listDeliveries, redeliver } from '../../domain/notify/deliveries';
import {
  allWebhookEventTypes,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  updateWebhookEndpoint,
} from '../../domain/notify/endpoints';
import { cliActor } from '../../domain/audit/events';
import { cliOutboundPolicy } from '../../runtime/config';
import { cliSecretsKeys, secretBoxOf } from '../../runtime/stored-secrets';
import { emit, table, withDatabase } from '../output';

const list = (value: string) => value.split(',').map((item) => item.trim()).filter(Boolean);

export function webhookCommands(): Command {
  const webhook = new Command('webhook').description("An organization's webhook endpoints and their deliveries");

  webhook
    .command('create')
    .description('Register an endpoint; its signing secret is printed once')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--url <url>', 'where to POST events (https)')
    .requiredOption('--events <list>', `comma-separated event types: ${allWebhookEventTypes.join(', ')}`, list)
    .option('--description <text>', 'what it is for')
    .action(
      withDatabase(async (db, options: { org: string; url: string; events: string[]; description?: string }, command, config) => {
        const org = await findOrganization(db, options.org);
        const secrets = secretBoxOf(cliSecretsKeys(config));
        const { endpoint, secret } = await createWebhookEndpoint(db, secrets, org.id, { url: options.url, eventTypes: options.events, description: options.description }, cliOutboundPolicy(config));
        emit(command, { ...endpoint, secret }, [
          `Registered ${endpoint.url} (${endpoint.id}) for ${org.slug}: ${endpoint.eventTypes.join(', ')}`,
          '',
          'Signing secret (shown once; store it with the receiver):',
          `  ${secret}`,
        ]);
      }),
    );

  webhook
    .command('list')
    .description("List an organization's endpoints")
    .requiredOption('--org <slug>', 'the organization')
    .action(
      withDatabase(async (db, options: { org: string }, command) => {
        const org = await findOrganization(db, options.org);
        const endpoints = await listWebhookEndpoints(db, org.id);
        emit(
          command,
          endpoints,
          endpoints.length
            ? table([
                ['ID', 'URL', 'EVENTS', 'STATE'],
                ...endpoints.map((e) => [e.id, e.url, e.eventTypes.join(','), e.enabled ? 'on' : `off: ${e.disabledReason ?? ''}`]),
              ])
            : 'No webhook endpoints yet.',
        );
      }),
    );

  webhook
    .command('update')
    .description('Change an endpoint, or switch it off and on (--enable clears its failures)')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <endpoint id>', 'the endpoint, e.g. whk_01…')
    .option('--url <url>', 'a new URL')
    .option('--events <list>', 'the event types, comma-separated', list)
    .option('--description <text>', 'what it is for')
    .option('--enable', 'switch it on')
    .option('--disable', 'switch it off')
    .action(
      withDatabase(
        async (
          db,
          options: { org: string; id: string; url?: string; events?: string[]; description?: string; enable?: boolean; disable?: boolean },
          command,
          config,
        ) => {
          if (options.enable && options.disable) throw new Error('--enable and --disable contradict each other');
          const org = await findOrganization(db, options.org);
          const enabled = options.enable ? true : options.disable ? false : undefined;
          const endpoint = await updateWebhookEndpoint(
            db,
            org.id,
            options.id,
            { url: options.url, eventTypes: options.events, description: options.description, enabled },
            cliOutboundPolicy(config),
          );
          emit(command, endpoint, `${endpoint.id}: ${endpoint.url}, ${endpoint.enabled ? 'on' : 'off'}; ${endpoint.eventTypes.join(', ')}`);
        },
      ),
    );

  webhook
    .command('delete')
    .description('Remove an endpoint and its delivery log')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <endpoint id>', 'the endpoint')
    .action(
      withDatabase(async (db, options: { org: string; id: string }, command) => {
        const org = await findOrganization(db, options.org);
        const endpoint = await deleteWebhookEndpoint(db, org.id, options.id);
        emit(command, endpoint, `Removed ${endpoint.url} (${endpoint.id})`);
      }),
    );

  webhook
    .command('deliveries')
    .description("An endpoint's delivery log, newest first")
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--id <endpoint id>', 'the endpoint')
    .option('--limit <n>', 'how many (default 20)', (value) => Number.parseInt(value, 10), 20)
    .action(
      withDatabase(async (db, options: { org: string; id: string; limit: number }, command) => {
        const org = await findOrganization(db, options.org);
        const { items } = await listDeliveries(db, org.id, options.id, { limit: Math.min(Math.max(options.limit || 20, 1), 200) });
        emit(
          command,
          items,
          items.length
            ? table([
                ['ID', 'EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'LAST ERROR'],
                ...items.map((d) => [d.id, d.eventId, d.eventType, d.status, String(d.attempts), d.lastError ?? '']),
              ])
            : 'No deliveries yet.',
        );
      }),
    );

  webhook
    .command('redeliver')
    .description('Send a delivery again (the same event id), with attempts of its own')
    .requiredOption('--org <slug>', 'the organization')
    .requiredOption('--delivery <delivery id>', 'the delivery, e.g. whd_01…')
    .action(
      withDatabase(async (db, options: { org: string; delivery: string }, command) => {
        const org = await findOrganization(db, options.org);
        const delivery = await redeliver(db, org.id, options.delivery, cliActor);
        emit(command, delivery, `Queued ${delivery.id}: ${delivery.eventType} ${delivery.eventId} again (a worker sends it)`);
      }),
    );
  return webhook;
}
