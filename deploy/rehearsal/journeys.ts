import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { passkeySignInLimits } from '../../api/console/session-routes';
import { Checks, seconds } from '../../test/chaos/scenario';
import { accessibilityViolations, launchChromium, screenshot } from '../../test/support/browser';
import { connectMcp, textOf } from '../../test/support/mcp';
import type { Deployment } from './deployment';

const run = promisify(execFile);

/** One journey a user makes through the proxy, and what it found. */
export interface JourneyResult {
  id: string;
  title: string;
  passed: boolean;
  failures: string[];
  /** What was seen, for the results file. */
  seen: Record<string, number | string | boolean>;
  ms: number;
}

/** The organization the journeys make, as the README's deployment section makes one. */
export interface JourneyOrganization {
  slug: string;
  agentToken: string;
  owner: { email: string; setPasswordUrl: string; token: string };
}

interface Journey {
  id: string;
  title: string;
  /** In the short form CI runs. */
  short?: boolean;
  run(context: JourneyContext): Promise<Record<string, number | string | boolean>>;
}

interface JourneyContext {
  deployment: Deployment;
  org: JourneyOrganization;
  checks: Checks;
  folder: string;
  log(line: string): void;
}

/** The README's policy for the walkthrough: urgent tasks need a person, titles with secrets are refused. */
const walkthroughPolicy = `@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("urgent-needs-review") @decision("review") @reason("Urgent tasks need a person's eye")
permit (principal, action == Action::"tasks.create", resource) when { resource.priority == "urgent" };

@id("no-secrets") @reason("Titles must not mention secrets")
forbid (principal, action, resource) when { resource has title && resource.title like "*secret*" };
`;

/**
 * The README's steps for a new deployment, run on an api host as `docker compose exec api node bin/gatehouse.js …`
 * runs them: an organization, an agent's key, its first owner (with the set-password link) and the owner's token;
 * then the walkthrough's policy.
 */
export async function createJourneyOrganization(deployment: Deployment, folder: string): Promise<JourneyOrganization> {
  const slug = `acme-${Date.now().toString(36)}`;
  await deployment.cli(['org', 'create', '--slug', slug, '--name', 'Acme Inc']);
  const key = await deployment.cli(['key', 'create', '--org', slug, '--label', 'agent', '--access', 'read_write']);
  const email = `ada@${slug}.example`;
  const owner = await deployment.cli(['user', 'create', '--org', slug, '--email', email, '--role', 'owner']);
  const token = await deployment.cli(['user', 'token', '--org', slug, '--email', email]);
  const policyFile = join(folder, 'walkthrough.cedar');
  writeFileSync(policyFile, walkthroughPolicy);
  await deployment.cli(['policy', 'set', '--org', slug, '--file', policyFile]);
  return { slug, agentToken: key.token, owner: { email, setPasswordUrl: owner.set_password_url, token: token.token } };
}

/**
 * A limit per address, through Caddy to the two apis: this machine's requests (one address), half of them with an
 * X-Forwarded-For of their own, spread over both apis, are admitted exactly the limit's worth together; then each
 * api, asked directly from the same address, refuses too. Caddy drops what a client wrote into X-Forwarded-For and
 * appends the address it saw; the apis (TRUST_PROXY=1, compose's) count that one.
 */
async function addressLimitThroughTheProxy({ deployment, checks, log }: JourneyContext): Promise<Record<string, number>> {
  const path = '/console/api/session/passkey-options';
  const ask = (base: string, forwardedFor?: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}, signal: AbortSignal.timeout(30_000) });
  // A first request opens the window and says how much of it is left: a burst must fit in one window.
  let probe = await ask(deployment.proxyUrl);
  await probe.body?.cancel();
  if (Number(probe.headers.get('x-ratelimit-reset')) < 15) {
    log(`journey address-limits: waiting ${probe.headers.get('x-ratelimit-reset')} s for a fresh window…`);
    await sleep((Number(probe.headers.get('x-ratelimit-reset')) + 1) * 1000);
    probe = await ask(deployment.proxyUrl);
    await probe.body?.cancel();
  }
  checks.equal('the first request is admitted', probe.status, 200);
  const left = Number(probe.headers.get('x-ratelimit-remaining'));
  checks.equal(`what is left of the limit (${passkeySignInLimits.perMinute} a minute)`, left, passkeySignInLimits.perMinute - 1);
  const over = 20;
  const answers = await Promise.all(Array.from({ length: left + over }, (_, i) => ask(deployment.proxyUrl, i % 2 ? `203.0.113.${i}, 198.51.100.${i}` : undefined)));
  const admitted = answers.filter((answer) => answer.status === 200).length;
  const refused = answers.filter((answer) => answer.status === 429).length;
  const admittedWithTheirOwn = answers.filter((answer, i) => i % 2 === 1 && answer.status === 200).length;
  // Had an address a client wrote been counted, each of those would have had a window of its own: more admitted.
  checks.equal(`admitted of ${left + over} sent at once through the proxy, half with an X-Forwarded-For of their own`, admitted, left);
  checks.equal('refused with 429', refused, over);
  // Each api counts in the one shared window: asked directly from this address, both refuse.
  const direct: number[] = [];
  for (const api of deployment.apis) {
    const answer = await ask(`http://${deployment.network.host(api.name).address}:3000`);
    await answer.body?.cancel();
    direct.push(answer.status);
  }
  checks.that(`each api, asked directly from the same address, refuses (${direct.join(', ')})`, direct.every((status) => status === 429));
  await Promise.all(answers.map((answer) => answer.body?.cancel() ?? Promise.resolve()));
  return { limit: passkeySignInLimits.perMinute, sent: left + over + 1, admitted: admitted + 1, refused, admittedWithTheirOwn };
}

const journeys: Journey[] = [
  {
    id: 'walkthrough',
    title: "The README's walkthrough through the proxy: Allow, Review, Deny, approve",
    short: true,
    async run({ deployment, org, checks }) {
      const api = `${deployment.proxyUrl}/api`;
      const me = await call(`${api}/v1/me`, org.agentToken);
      checks.equal('GET /v1/me', me.status, 200);
      const allowed = await call(`${api}/v1/tasks`, org.agentToken, { title: 'Call the supplier', status: 'todo' });
      checks.equal('Allow: POST /v1/tasks', allowed.status, 201);
      const held = await call(`${api}/v1/tasks`, org.agentToken, { title: 'Pay the invoice', priority: 'urgent' });
      checks.equal('Review: POST /v1/tasks', held.status, 202);
      checks.equal('Review: error.code', held.body?.error?.code, 'pending_review');
      checks.that(`Review: web_url on the public URL (${held.body?.review?.web_url})`, String(held.body?.review?.web_url).startsWith(`${deployment.proxyUrl}/reviews/rev_`));
      const denied = await call(`${api}/v1/tasks`, org.agentToken, { title: 'Share the secret sauce' });
      checks.equal('Deny: POST /v1/tasks', denied.status, 403);
      checks.equal('Deny: error.code', denied.body?.error?.code, 'policy_denied');
      const pending = await call(`${api}/v1/reviews?status=pending`, org.owner.token);
      checks.that('the held write is in the pending reviews', (pending.body?.data ?? []).some((review: any) => review.id === held.body?.review?.id));
      const approved = await call(`${api}/v1/reviews/${held.body?.review?.id}/approve`, org.owner.token, { comment: 'Paid today' });
      checks.equal('approve: POST /v1/reviews/{id}/approve', approved.status, 200);
      const tasks = await call(`${api}/v1/tasks?limit=50`, org.agentToken);
      const titles = (tasks.body?.data ?? []).map((task: any) => task.title);
      checks.that('the approved task is written', titles.includes('Pay the invoice'));
      checks.that('the denied task is not', !titles.includes('Share the secret sauce'));
      return { allow: allowed.status, review: held.status, deny: denied.status, approve: approved.status };
    },
  },
  {
    id: 'console',
    title: 'The owner sets a password from the CLI’s link, signs in and approves in the console (Chromium)',
    async run({ deployment, org, checks, folder }) {
      const browser = await launchChromium();
      try {
        const held = await call(`${deployment.proxyUrl}/api/v1/tasks`, org.agentToken, { title: 'Renew the lease', priority: 'urgent' });
        checks.equal('held for review', held.status, 202);
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        const password = 'the lease is due in May';
        await page.goto(org.owner.setPasswordUrl);
        await page.getByLabel('New password').fill(password);
        await page.getByLabel('The same password again').fill(password);
        await page.getByRole('button', { name: 'Set password' }).click();
        await page.getByText('Your password is set').waitFor();
        // The 202's web_url, as the agent hands it to its user: sign-in first, then the review.
        await page.goto(held.body.review.web_url);
        await page.getByLabel('Organization').fill(org.slug);
        await page.getByLabel('Email').fill(org.owner.email);
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        const card = page.locator('article.review', { hasText: 'Renew the lease' });
        await card.waitFor({ timeout: 20_000 });
        const violations = await accessibilityViolations(page);
        checks.equal('serious or critical accessibility violations on the review page', violations.length, 0);
        await screenshot(page, 'deployment-console-review');
        await card.getByRole('button', { name: 'Approve', exact: true }).click();
        const written = await waitFor(async () => {
          const tasks = await call(`${deployment.proxyUrl}/api/v1/tasks?limit=50`, org.agentToken);
          return (tasks.body?.data ?? []).some((task: any) => task.title === 'Renew the lease');
        }, 30_000);
        checks.that('the write approved in the console is applied', written);
        checks.equal('script errors in the page', errors.length, 0);
        writeFileSync(join(folder, 'console-errors.txt'), errors.join('\n'));
        return { approvedInConsole: written, accessibilityViolations: violations.length };
      } finally {
        await browser.close();
      }
    },
  },
  {
    id: 'mcp',
    title: "An agent over MCP through the proxy (the SDK's client)",
    async run({ deployment, org, checks }) {
      const client = await connectMcp(deployment.proxyUrl, org.agentToken);
      try {
        const { tools } = await client.listTools();
        checks.that('the catalog lists create_task and list_tasks', ['create_task', 'list_tasks'].every((name) => tools.some((tool) => tool.name === name)));
        const created = await client.callTool({ name: 'create_task', arguments: { title: 'Book the review meeting' } });
        checks.that(`create_task answers without an error (${textOf(created).slice(0, 120)})`, created.isError !== true);
        const listed = await client.callTool({ name: 'list_tasks', arguments: {} });
        checks.that('list_tasks shows the task MCP created', textOf(listed).includes('Book the review meeting'));
        const held = await client.callTool({ name: 'create_task', arguments: { title: 'Wire the deposit', priority: 'urgent' } });
        checks.that('a held write over MCP names the console page', textOf(held).includes(`${deployment.proxyUrl}/reviews/rev_`));
        return { tools: tools.length };
      } finally {
        await client.close();
      }
    },
  },
  {
    id: 'workflow-list',
    title: "An operator's temporal workflow list --query on Gatehouse's search attributes (PostgreSQL visibility)",
    async run({ deployment, org, checks }) {
      const held = await call(`${deployment.proxyUrl}/api/v1/tasks`, org.agentToken, { title: 'Order the banners', priority: 'urgent' });
      checks.equal('held for review', held.status, 202);
      const workflowId = held.headers.get('x-gatehouse-workflow-id') ?? '';
      const list = async (query: string) => {
        const { stdout } = await run(deployment.options.binaries.temporalCli, [
          'workflow', 'list', '--address', deployment.temporal.clientAddress, '--namespace', deployment.namespace, '--query', query, '--output', 'json',
        ], { env: { ...process.env, HOME: deployment.options.folder } });
        return stdout.trim() ? (JSON.parse(stdout) as { execution: { workflowId: string } }[]).map((row) => row.execution.workflowId) : [];
      };
      // SQL visibility is written by the history service's visibility queue, a moment after the write.
      const queries = {
        pending: `GatehouseOrganization = '${org.slug}' AND GatehouseReviewStatus = 'pending'`,
        denied: `GatehouseOrganization = '${org.slug}' AND GatehouseDecision = 'deny'`,
        rest: `GatehouseOrganization = '${org.slug}' AND GatehouseInterface = 'rest' AND GatehouseOperation = 'tasks.create'`,
        mcp: `GatehouseOrganization = '${org.slug}' AND GatehouseInterface = 'mcp'`,
      };
      const found: Record<string, number> = {};
      const listed = await waitFor(async () => {
        for (const [name, query] of Object.entries(queries)) found[name] = (await list(query)).length;
        return (await list(queries.pending)).includes(workflowId) && found.denied! >= 1 && found.mcp! >= 1;
      }, 30_000);
      checks.that(`the held write ${workflowId} is listed by GatehouseReviewStatus = 'pending'`, listed);
      checks.atLeast('Deny workflows listed by GatehouseDecision', found.denied ?? 0, 1);
      checks.atLeast('MCP workflows listed by GatehouseInterface', found.mcp ?? 0, 1);
      checks.atLeast('REST tasks.create workflows listed', found.rest ?? 0, 3);
      return found;
    },
  },
  {
    id: 'address-limits',
    title: 'A limit per address holds across the two apis behind Caddy, a client-written X-Forwarded-For or not',
    short: true,
    run: addressLimitThroughTheProxy,
  },
  {
    id: 'metrics',
    title: 'Prometheus metrics of each api and worker replica, on its own host',
    async run({ deployment, checks }) {
      const seen: Record<string, number> = {};
      let gatedWrites = 0;
      for (const api of deployment.apis) {
        const text = await metrics(deployment.network.host(api.name).address, 9464);
        const calls = sum(text, 'gatehouse_calls_total');
        seen[`${api.name}.calls`] = calls;
        gatedWrites += sum(text, 'gatehouse_gated_writes_total');
        // Round robin: each replica behind the proxy served some of the journeys' calls.
        checks.atLeast(`calls ${api.name} served`, calls, 1);
      }
      seen.gatedWrites = gatedWrites;
      checks.atLeast('gated writes counted across the api replicas', gatedWrites, 5);
      for (const worker of deployment.workers) {
        const address = deployment.network.host(worker.name).address;
        const ours = await metrics(address, 9465);
        const sdk = await metrics(address, 9466);
        checks.that(`${worker.name} serves Gatehouse's worker metrics`, ours.includes('# TYPE'));
        checks.that(`${worker.name} serves the Temporal SDK's metrics`, /temporal_\w+/.test(sdk));
        seen[`${worker.name}.sdkSeries`] = sdk.split('\n').filter((line) => line.startsWith('temporal_')).length;
      }
      return seen;
    },
  },
];

/** Runs the journeys (the short form: those CI runs) against the deployment, each with its own checks. */
export async function runJourneys(deployment: Deployment, options: { short: boolean; folder: string; log: (line: string) => void }): Promise<JourneyResult[]> {
  const org = await createJourneyOrganization(deployment, options.folder);
  const results: JourneyResult[] = [];
  for (const journey of journeys.filter((candidate) => !options.short || candidate.short)) {
    const started = Date.now();
    const checks = new Checks();
    let seen: Record<string, number | string | boolean> = {};
    options.log(`journey ${journey.id}: ${journey.title}…`);
    try {
      seen = await journey.run({ deployment, org, checks, folder: options.folder, log: options.log });
    } catch (error) {
      checks.failures.push(`${(error as Error).message.split('\n')[0]}`);
    }
    const result = { id: journey.id, title: journey.title, passed: checks.failures.length === 0, failures: checks.failures, seen, ms: Date.now() - started };
    options.log(`journey ${journey.id}: ${result.passed ? 'pass' : 'FAIL'} (${seconds(result.ms)})${result.failures.map((failure) => `\n  ${failure}`).join('')}`);
    results.push(result);
  }
  return results;
}

async function call(url: string, token: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, body: await response.json().catch(() => undefined), headers: response.headers };
}

async function metrics(address: string, port: number): Promise<string> {
  const response = await fetch(`http://${address}:${port}/metrics`, { signal: AbortSignal.timeout(5000) });
  return response.text();
}

/** The sum of a counter's series in Prometheus's text format. */
function sum(text: string, name: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await sleep(500);
  }
  return false;
}
