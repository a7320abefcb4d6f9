import { Command, InvalidArgumentError } from 'commander';
import {
  approveLinkRules,
  createOrganization,
  findOrganization,
  listOrganizations,
  updateOrganization,
  type ApproveLinkRule,
  type Organization,
} from '../../domain/identity/organizations';
import { cliActor } from '../../domain/audit/events';
import { AppError } from '../../domain/kit/errors';
import { findReviewNotificationSettings, parseWait, shownWait, updateReviewNotificationSettings } from '../../domain/notify/settings';
import { cliOutboundPolicy } from '../../runtime/config';
import { cliSecretsKeys, secretBoxOf } from '../../runtime/stored-secrets';
import { emit, table, withDatabase } from '../output';

const onOff = (value: string) => {
  if (value !== 'on' && value !== 'off') throw new InvalidArgumentError('takes on or off');
  return value === 'on';
};

const approveLinkRule = (value: string): ApproveLinkRule => {
  if (!(approveLinkRules as readonly string[]).includes(value)) throw new InvalidArgumentError('takes anyone_with_link or signed_in');
  return value as ApproveLinkRule;
};

const approveLinksInWords: Record<ApproveLinkRule, string> = { anyone_with_link: 'anyone with the link', signed_in: 'signed in as that person' };

function describe(org: Organization): string[] {
  const rows: [string, string][] = [
    ['id', org.id],
    ['plan', org.plan],
    ['timezone', org.timezone],
    ['api access', org.apiAccess ? 'on' : 'off'],
    ['self-approval', org.selfApproval ? 'allowed' : 'refused'],
    ['policy text', org.sharePolicyText ? 'shown to agents' : 'kept from agents'],
    ['approve links', approveLinksInWords[org.approveLinks]],
  ];
  return [`${org.slug}  ${org.name}`, ...rows.map(([label, value]) => `  ${label.padEnd(14)}${value}`)];
}

export function organizationCommands(): Command {
  const org = new Command('org').description('Organizations: create, update, show');

  org
    .command('create')
    .description('Create an organization (it starts with the default policy set)')
    .requiredOption('--slug <slug>', 'short name used in paths, a-z 0-9 -')
    .requiredOption('--name <name>', 'display name')
    .option('--plan <plan>', 'plan: free, pro, business, or another row of the plans table', 'free')
    .option('--timezone <tz>', 'IANA time zone, e.g. Europe/Berlin', 'UTC')
    .option('--api-access <on|off>', 'whether API keys may be used', onOff, true)
    .action(
      withDatabase(async (db, options: { slug: string; name: string; plan: string; timezone: string; apiAccess: boolean }, command) => {
        const created = await createOrganization(db, options);
        emit(command, created, [`Created organization`, ...describe(created)]);
      }),
    );

  org
    .command('update')
    .description("Change an organization's name, plan, time zone, API access, self-approval, policy-text sharing or what Approve links need; takes effect at once")
    .requiredOption('--org <slug>', 'the organization')
    .option('--name <name>', 'display name')
    .option('--plan <plan>', "plan: free, pro, business, or another row of the plans table; its limits apply from the organization's next request")
    .option('--timezone <tz>', 'IANA time zone')
    .option('--api-access <on|off>', 'whether API keys may be used', onOff)
    .option('--self-approval <on|off>', 'whether a person may approve a held write made with an API key they created', onOff)
    .option('--share-policy-text <on|off>', "whether agents told of a Deny or a Review get the text of the rules that decided", onOff)
    .option(
      '--approve-links <anyone_with_link|signed_in>',
      "what an Approve link from a review email needs: the link alone, or the console session of the person it was sent to (Deny links work by the link alone)",
      approveLinkRule,
    )
    .action(
      withDatabase(async (db, options: { org: string; name?: string; plan?: string; timezone?: string; apiAccess?: boolean; selfApproval?: boolean; sharePolicyText?: boolean; approveLinks?: ApproveLinkRule }, command) => {
        const updated = await updateOrganization(db, options.org, options);
        emit(command, updated, [`Updated organization`, ...describe(updated)]);
      }),
    );

  org
    .command('notifications')
    .description("Show or change how the organization's held writes are announced and escalated")
    .requiredOption('--org <slug>', 'the organization')
    .option('--review-escalation <wait|off>', 'how long a review waits before admins, then owners, are told (30m, 2h), or off')
    .option('--slack-webhook-url <url|none>', 'a Slack-compatible incoming webhook told of held writes, or none')
    .action(
      withDatabase(async (db, options: { org: string; reviewEscalation?: string; slackWebhookUrl?: string }, command, config) => {
        const org = await findOrganization(db, options.org);
        const escalation = options.reviewEscalation === undefined ? undefined : options.reviewEscalation === 'off' ? null : parseWait(options.reviewEscalation);
        if (escalation === undefined && options.reviewEscalation !== undefined) {
          throw new AppError('validation_failed', `--review-escalation: "${options.reviewEscalation}" is not a wait such as 30m or 2h, or off`);
        }
        const slack = options.slackWebhookUrl === 'none' ? null : options.slackWebhookUrl;
        const secrets = secretBoxOf(cliSecretsKeys(config));
        const settings =
          escalation === undefined && slack === undefined
            ? await findReviewNotificationSettings(db, secrets, org.id)
            : await updateReviewNotificationSettings(db, secrets, org.id, { reviewEscalationMs: escalation, slackWebhookUrl: slack }, cliOutboundPolicy(config), cliActor);
        emit(command, settings, [
          `Review escalation: ${settings.reviewEscalationMs === null ? 'off' : `after ${shownWait(settings.reviewEscalationMs)} (admins, then owners)`}`,
          `Slack webhook: ${settings.slackWebhookUrl ?? 'none'}`,
        ]);
      }),
    );

  org
    .command('show')
    .description('Show one organization, or list them all')
    .option('--org <slug>', 'the organization (all when left out)')
    .action(
      withDatabase(async (db, options: { org?: string }, command) => {
        if (options.org) {
          const found = await findOrganization(db, options.org);
          emit(command, found, describe(found));
          return;
        }
        const all = await listOrganizations(db);
        emit(command, all, all.length ? table([['SLUG', 'NAME', 'PLAN', 'TIMEZONE', 'API'], ...all.map((o) => [o.slug, o.name, o.plan, o.timezone, o.apiAccess ? 'on' : 'off'])]) : 'No organizations yet.');
      }),
    );
  return org;
}
