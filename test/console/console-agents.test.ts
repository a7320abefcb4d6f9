import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot } from '../support/browser';
import { addPerson, signIn, type TestPerson } from '../support/console';
import { json, startHarness, type Harness, type TestOrganization } from '../support/harness';

// The Agent Command Center in Chromium against the real api, worker, Temporal and PostgreSQL: agents' calls
// appear as they happen, each key's day, what agents remember and an admin's correction of it (recorded), and
// MCP tasks waiting on a review.

let h: Harness;
let acme: TestOrganization;
let browser: Browser;
let origin: string;
let admin: TestPerson;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  acme = await h.createOrganization({ name: 'Acme Inc.' });
  admin = await addPerson(h.db, acme.organization, 'admin');
  origin = await h.listen();
  browser = await launchChromium();
  page = await signedInPage(admin);
  await page.getByRole('heading', { level: 1, name: 'Agent Command Center' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

async function signedInPage(person: TestPerson): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const opened = await context.newPage();
  opened.on('pageerror', (error) => pageErrors.push(error.message));
  await opened.goto(`${origin}/agents`);
  await opened.getByLabel('Organization').fill(acme.organization.slug);
  await opened.getByLabel('Email').fill(person.email);
  await opened.getByLabel('Password').fill(person.password);
  await opened.getByRole('button', { name: 'Sign in' }).click();
  return opened;
}

const callsTable = () => page.getByRole('table', { name: 'Calls, newest first' });

describe('the Agent Command Center', () => {
  it("shows an agent's REST and MCP calls within seconds, with how they ended, and each key's day", async () => {
    const listed = await h.request({ method: 'GET', url: '/api/v1/customers', token: acme.readWriteToken });
    expect(listed.statusCode).toBe(200);
    const row = callsTable().getByRole('row', { name: /customers\.list/ });
    await row.waitFor({ timeout: 10_000 });
    expect(await row.innerText()).toMatch(/test agent\s+REST\s+customers\.list\s+OK/);

    const mcp = await h.mcp(acme.readWriteToken);
    await mcp.callTool({ name: 'list_projects', arguments: {} });
    await callsTable().getByRole('row', { name: /projects\.list/ }).getByText('MCP').waitFor({ timeout: 10_000 });

    const denied = await h.request({ method: 'POST', url: '/api/v1/tasks', token: acme.readWriteToken, payload: { title: 'deny this one' } });
    expect(denied.statusCode).toBe(403);
    await callsTable().getByRole('row', { name: /tasks\.create/ }).getByText('Denied').waitFor({ timeout: 10_000 });

    const agents = page.getByRole('region', { name: 'Agents today' });
    const agentRow = agents.getByRole('row', { name: /test agent/ });
    await expect.poll(async () => (await agentRow.innerText()).split('\t').slice(1, 5).map(Number)).toEqual([3, 0, 0, 1]);

    await page.getByLabel('Interface').selectOption('mcp');
    await expect.poll(async () => (await callsTable().locator('tbody tr').allInnerTexts()).every((text) => text.includes('MCP'))).toBe(true);
    await page.getByLabel('Interface').selectOption('');
    await page.getByLabel('Outcome').selectOption('denied');
    await expect.poll(async () => callsTable().locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Outcome').selectOption('');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('shows MCP tasks waiting on a review, with the review they wait on', async () => {
    const mcp = await h.mcp(acme.readWriteToken);
    const created = await mcp.request(
      { method: 'tools/call', params: { name: 'create_task', arguments: { title: 'review the task from MCP' }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    const waiting = page.getByRole('region', { name: 'MCP tasks waiting on a review' });
    await waiting.getByRole('link', { name: `Review ${created.task.taskId}` }).waitFor({ timeout: 10_000 });
    expect(await waiting.innerText()).toContain('The title asks for a review');
  });

  it('shows what agents remember; an admin corrects one and forgets another, each recorded with who and why', async () => {
    for (const content of ['The customer Grace prefers email', 'The office moves in March']) {
      const remembered = await h.request({ method: 'POST', url: '/api/v1/memories', token: acme.readWriteToken, payload: { content } });
      expect(remembered.statusCode).toBe(201);
    }
    const memories = page.getByRole('region', { name: 'What agents remember' });
    await memories.getByText('The customer Grace prefers email').waitFor({ timeout: 10_000 });
    await screenshot(page, 'agent-command-center');

    const first = memories.getByRole('listitem').filter({ hasText: 'The customer Grace prefers email' });
    await first.getByRole('button', { name: /^Correct memory/ }).click();
    await first.getByLabel('The note as it should read').fill('The customer Grace prefers phone calls');
    await first.getByLabel('Why (kept in the audit trail)').fill('She told us on the phone');
    await first.getByRole('button', { name: 'Save correction' }).click();
    await memories.getByText('The customer Grace prefers phone calls').waitFor();

    const second = memories.getByRole('listitem').filter({ hasText: 'The office moves in March' });
    await second.getByRole('button', { name: /^Forget memory/ }).click();
    await second.getByLabel('Why (kept in the audit trail)').fill('The move was cancelled');
    await second.getByRole('button', { name: 'Forget it' }).click();
    await second.waitFor({ state: 'detached' });

    const recalled = json(await h.request({ method: 'GET', url: '/api/v1/memories', token: acme.readWriteToken })).data;
    expect(recalled.map((memory: { content: string }) => memory.content)).toEqual(['The customer Grace prefers phone calls']);
    const { rows } = await h.db.query(
      `SELECT type, actor_type, actor_id, data->>'reason' AS reason FROM audit_events WHERE org_id = $1 AND type LIKE 'memory.%' ORDER BY id`,
      [acme.organization.id],
    );
    expect(rows).toEqual([
      { type: 'memory.corrected', actor_type: 'user', actor_id: admin.user.id, reason: 'She told us on the phone' },
      { type: 'memory.forgotten', actor_type: 'user', actor_id: admin.user.id, reason: 'The move was cancelled' },
    ]);
  });

  it("a member sees what agents do, not what they remember; the console's API refuses a member's correction", async () => {
    const member = await addPerson(h.db, acme.organization, 'member');
    const memberPage = await signedInPage(member);
    await memberPage.getByRole('heading', { level: 1, name: 'Agent Command Center' }).waitFor();
    await memberPage.getByRole('table', { name: 'Calls, newest first' }).getByRole('row', { name: /customers\.list/ }).waitFor();
    expect(await memberPage.getByRole('region', { name: 'What agents remember' }).count()).toBe(0);
    expect(await accessibilityViolations(memberPage)).toEqual([]);

    const session = await signIn(h.app, acme.organization, member);
    const memoryId = json(await h.request({ method: 'GET', url: '/api/v1/memories', token: acme.readWriteToken })).data[0].id;
    const refused = await session.request({ method: 'PATCH', url: `/console/api/v1/agents/memories/${memoryId}`, payload: { content: 'x', reason: 'y' } });
    expect(refused.statusCode).toBe(403);
    expect((await session.request({ method: 'GET', url: '/console/api/v1/agents/memories' })).statusCode).toBe(403);
  });

  it("an admin sets a key's own budgets on the API keys page; the Agents page shows its use of them", async () => {
    const token = await acme.keyWith(['customers.read', 'customers.write']);
    const label = 'narrow customers.read,customers.write';
    await page.goto(`${origin}/settings/advanced/api-keys`);
    await page.getByRole('button', { name: `Set budgets of ${label}` }).click();
    const form = page.getByRole('form', { name: `Budgets of "${label}"` });
    await form.getByLabel('Requests a day').fill('5');
    await form.getByRole('button', { name: 'Add a cap' }).click();
    await form.getByLabel('Operation').selectOption('customers.update');
    await form.getByLabel('Writes a day of customers.update').fill('2');
    expect(await accessibilityViolations(page)).toEqual([]);
    await form.getByRole('button', { name: 'Save budgets' }).click();
    await page.getByRole('row', { name: /narrow customers/ }).getByText('5 requests a day · customers.update 2 a day').waitFor();

    const customer = json(await h.request({ method: 'POST', url: '/api/v1/customers', token, payload: { name: 'Budget customer' } })).data;
    const updates = [];
    for (const phone of ['+49 30 1', '+49 30 2', '+49 30 3']) {
      updates.push((await h.request({ method: 'PATCH', url: `/api/v1/customers/${customer.id}`, token, payload: { phone } })).statusCode);
    }
    expect(updates).toEqual([200, 200, 429]);

    await page.goto(`${origin}/agents`);
    const row = page.getByRole('region', { name: 'Agents today' }).getByRole('row', { name: /narrow customers/ });
    await expect.poll(async () => await row.innerText()).toMatch(/Requests 4 \/ 5[\s\S]*customers\.update 2 \/ 2 \(1 refused\)/);
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('left no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
