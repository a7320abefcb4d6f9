import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { Database } from '../../db/database';
import type { Caller, Role } from '../../domain/identity/actors';
import { authenticate } from '../../domain/identity/authenticate';
import { newId } from '../../domain/kit/ids';
import { createPersonalToken } from '../../domain/identity/people';
import { addPerson, signIn, type ConsoleSession, type TestPerson } from './console';
import type { Holdings } from './cross-tenant-probes';
import { insertFixtures, insertWebhookDelivery } from './fixtures';
import { json, type Harness, type TestOrganization } from './harness';

// An organization furnished for cross-tenant tests: a record of every kind (the fixtures, a memory, a write held
// for review that is also an MCP task, an API key, a person with a console session), what the other organization
// must never see of it, and a digest of all its rows to show that nothing of it changed.

/** Someone signed in to the console, and who they are to the access rules. */
export interface SignedIn {
  role: Role;
  person: TestPerson;
  session: ConsoleSession;
  caller: Caller;
}

export interface Tenant {
  test: TestOrganization;
  holdings: Holdings;
  people: SignedIn[];
  /** The MCP client of its read-write key. */
  mcp: McpClient;
}

/** The title of the write each tenant holds for review; both policies hold titles starting with "review". */
const heldTitle = 'review this matrix write';

export async function furnish(h: Harness, test: TestOrganization, roles: Role[]): Promise<Tenant> {
  const { organization } = test;
  const fixtures = await insertFixtures(h.db, organization.id);
  const remembered = await h.request({ method: 'POST', url: '/api/v1/memories', token: test.readWriteToken, payload: { content: 'matrix memory' } });
  if (remembered.statusCode !== 201) throw new Error(`the memory was not written: ${remembered.statusCode} ${remembered.body}`);
  const mcp = await h.mcp(test.readWriteToken);
  // Held as an MCP task, so that the review is also a task of the key: one record, two ways to ask for it.
  const held = await mcp.request({ method: 'tools/call', params: { name: 'create_task', arguments: { title: heldTitle }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
  if (held.task.status !== 'working') throw new Error(`the write was not held for review: ${JSON.stringify(held)}`);

  const people: SignedIn[] = [];
  for (const role of roles) {
    const person = await addPerson(h.db, organization, role);
    const session = await signIn(h.app, organization, person);
    // The console's caller is the person with a session; a personal token of theirs stands for them before the access rules.
    const caller = await authenticate(h.db, `Bearer ${(await createPersonalToken(h.db, person.user)).token}`);
    people.push({ role, person, session, caller });
  }

  const webhook = await insertWebhookDelivery(h.db, test.organization.id);
  // An applied write of the organization's own (a task of its own, so that undoing it touches no fixture).
  const applied = await h.request({ method: 'POST', url: '/api/v1/tasks', token: test.readWriteToken, payload: { title: 'Applied, to undo' } });
  const holdings: Holdings = {
    mem: fixtures.member,
    prj: fixtures.project,
    cus: fixtures.customer,
    prd: fixtures.product,
    inv: fixtures.invoice,
    bkg: fixtures.booking,
    exp: fixtures.expense,
    wlg: fixtures.workLog,
    cal: fixtures.event,
    task: fixtures.task,
    mtg: fixtures.meetingIngest,
    mry: json(remembered).data.id,
    rev: held.task.taskId,
    key: keyIdOf(test.readWriteToken),
    usr: people[0]!.person.user.id,
    whk: webhook.endpointId,
    whd: webhook.deliveryId,
    trw: await insertTrustWindow(h.db, organization.id, keyIdOf(test.readWriteToken), people[0]!.person.user.id),
    write: applied.headers['x-gatehouse-workflow-id'] as string,
  };
  return { test, holdings, people, mcp };
}

/** An open trust window of the key, which no probe's write matches (its title is the window's own). */
async function insertTrustWindow(db: Database, orgId: string, apiKeyId: string, openedBy: string): Promise<string> {
  const id = newId('trw');
  await db.query(
    `INSERT INTO trust_windows (id, org_id, api_key_id, operation, match, max_uses, expires_at, opened_by)
     VALUES ($1, $2, $3, 'tasks.create', '{"title": "matrix trust window"}', 5, now() + interval '1 day', $4)`,
    [id, orgId, apiKeyId, openedBy],
  );
  return id;
}

export function keyIdOf(token: string): string {
  const match = /^gate_k_(key_[0-9a-z]+)_/.exec(token);
  if (!match) throw new Error('not an API key');
  return match[1]!;
}

/** The tables that hold an organization's rows: every table with an org_id. */
async function organizationTables(db: Database): Promise<string[]> {
  const { rows } = await db.query(
    `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'org_id' ORDER BY table_name`,
  );
  return rows.map((row) => row.table_name as string);
}

const markedColumns = ['name', 'title', 'email', 'company', 'description', 'notes', 'transcript', 'content', 'location', 'sku', 'number', 'label'];

/**
 * Writes `marker` into every name, title, email and note of the organization, so that any of its text in another
 * organization's answer shows (the fixtures are the same words in every organization).
 */
export async function markTexts(db: Database, orgId: string, marker: string): Promise<void> {
  const { rows } = await db.query(
    `SELECT table_name, column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND column_name = ANY ($1) AND data_type IN ('text', 'character varying')
       AND table_name IN (SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'org_id')`,
    [markedColumns],
  );
  for (const { table_name: table, column_name: column } of rows) {
    const value = column === 'email' ? `$2 || '.' || ${column}` : `${column} || ' ' || $2`;
    await db.query(`UPDATE ${table} SET ${column} = ${value} WHERE org_id = $1 AND ${column} IS NOT NULL`, [orgId, marker]);
  }
}

/** Every id of the organization's rows, in every table: none may reach another organization's answers. */
export async function idsOf(db: Database, orgId: string): Promise<string[]> {
  const ids = [orgId];
  for (const table of await organizationTables(db)) {
    const { rows } = await db.query(`SELECT to_jsonb(t) ->> 'id' AS id FROM ${table} t WHERE org_id = $1`, [orgId]);
    ids.push(...rows.map((row) => row.id as string | null).filter((id): id is string => Boolean(id)));
  }
  return ids;
}

/** Every row of the organization, as text, with the table it is in. */
export async function rowsOf(db: Database, orgId: string): Promise<{ table: string; row: string }[]> {
  const rows: { table: string; row: string }[] = [];
  for (const table of await organizationTables(db)) {
    const found = await db.query(`SELECT to_jsonb(t)::text AS row FROM ${table} t WHERE org_id = $1`, [orgId]);
    rows.push(...found.rows.map((row) => ({ table, row: row.row as string })));
  }
  return rows;
}

/**
 * Each table's rows of the organization as text (and the organization's own row and day counter), to compare
 * before and after: a difference shows the row that changed. A token's last use is left out: using a token is not
 * changing the organization.
 */
export async function digestOf(db: Database, orgId: string): Promise<Record<string, string[]>> {
  const digest: Record<string, string[]> = {};
  const sources = [
    ...(await organizationTables(db)).map((table) => ({ name: table, from: `${table} t WHERE org_id = $1` })),
    { name: 'organizations', from: 'organizations t WHERE id = $1' },
    { name: 'usage_counters (day)', from: `usage_counters t WHERE scope = 'day:' || $1` },
  ];
  for (const { name, from } of sources) {
    const { rows } = await db.query(`SELECT (to_jsonb(t) - 'last_used_at')::text AS row FROM ${from} ORDER BY 1`, [orgId]);
    digest[name] = rows.map((row) => row.row as string);
  }
  return digest;
}

/** The digest once the organization's last calls are in the call log (written just after each answer). */
export async function settledDigestOf(db: Database, orgId: string): Promise<Record<string, string[]>> {
  let previous = await digestOf(db, orgId);
  for (let attempt = 0; attempt < 25; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const current = await digestOf(db, orgId);
    if (JSON.stringify(current) === JSON.stringify(previous)) return current;
    previous = current;
  }
  throw new Error(`the rows of ${orgId} keep changing, with nobody calling`);
}
