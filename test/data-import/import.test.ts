import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AppError } from '../../domain/kit/errors';
import { importData, validateDataFile } from '../../data-import/import';
import { importKinds, type DataFile } from '../../data-import/import-schema';
import { generateDemoData, seedOrganization, seedSizes } from '../../data-import/seed';
import { cleanEnv, runCli } from '../support/cli';
import { json, startHarness, type Harness } from '../support/harness';

let h: Harness;
const examplePath = new URL('../../db/examples/import-example.json', import.meta.url);
const example = (): DataFile => JSON.parse(readFileSync(examplePath, 'utf8'));
const exampleCounts = { team_members: 4, projects: 2, products: 4, tasks: 4, customers: 3, events: 2, invoices: 2, bookings: 2, expenses: 2, work_logs: 3 };
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-import-'));

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

/** Rows of every imported kind in one organization. */
async function rowCounts(orgId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const kind of importKinds) {
    const { rows } = await h.db.query(`SELECT count(*)::int AS n FROM ${kind} WHERE org_id = $1`, [orgId]);
    counts[kind] = rows[0].n;
  }
  return counts;
}

async function list(token: string, path: string): Promise<any[]> {
  const response = await h.request({ method: 'GET', url: `/api/v1/${path}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return json(response).data;
}

async function refusal(promise: Promise<unknown>): Promise<AppError & { details: { fields: { field: string; message: string }[] } }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toMatchObject({ code: 'validation_failed' });
  return error as never;
}

describe('gatehouse import', () => {
  it('imports the example file, and its records are visible through the API with their refs resolved', async () => {
    const org = await h.createOrganization();
    expect(await importData(h.db, org.organization.id, example())).toEqual(exampleCounts);
    expect(await rowCounts(org.organization.id)).toEqual(exampleCounts);

    const token = org.readOnlyToken;
    const customers = await list(token, 'customers');
    expect(customers.map((c) => c.name).sort()).toEqual(['Amara Okafor', 'Ines Costa', 'Lucas Meyer']);
    const northwind = customers.find((c) => c.company === 'Northwind Logistics');
    expect(northwind).toMatchObject({ email: 'amara.okafor@northwind-logistics.example', tags: ['vip', 'enterprise'], id: expect.stringMatching(/^cus_/) });

    const products = await list(token, 'products');
    const productId = (name: string) => products.find((p) => p.name === name).id;
    const invoices = await list(token, 'invoices');
    const invoice = invoices.find((i) => i.number === '2026-0041');
    expect(invoice).toMatchObject({ customer_id: northwind.id, status: 'sent', total_cents: 80_750, currency: 'EUR' });
    expect(invoice.lines).toEqual([
      { description: 'Consultation', quantity: 2, unit_price_cents: 12_000, product_id: productId('Consultation') },
      { description: 'Design work', quantity: 6.5, unit_price_cents: 9_500, product_id: productId('Design hour') },
      { description: 'Loyalty discount', quantity: 1, unit_price_cents: -5_000, product_id: null },
    ]);
    // Left out of the file, the total is computed from the lines.
    expect(invoices.find((i) => i.number === '2026-0042').total_cents).toBe(4_900);

    const team = await list(token, 'team-members?include_inactive=true');
    const memberId = (name: string) => team.find((m) => m.name === name).id;
    expect(team.find((m) => m.name === 'Tom Walsh').active).toBe(false);
    expect(await list(token, 'team-members')).toHaveLength(3);

    const projects = await list(token, 'projects');
    const relaunch = projects.find((p) => p.name === 'Website relaunch');
    expect(relaunch.owner_id).toBe(memberId('Olivia Bauer'));
    const tasks = await list(token, `tasks?project_id=${relaunch.id}`);
    expect(tasks.map((t) => t.title).sort()).toEqual(['Draft wireframes for the booking page', 'Move hosting to the new provider']);
    expect(tasks.find((t) => t.title.startsWith('Draft')).assignee_id).toBe(memberId('Rosa Mendes'));

    const events = await list(token, 'calendar/events?from=2026-11-01T00:00:00Z&to=2027-01-01T00:00:00Z');
    expect(events.find((e) => e.customer_id === northwind.id).attendee_ids.sort()).toEqual([memberId('Olivia Bauer'), memberId('Rosa Mendes')].sort());
    const bookings = await list(token, 'bookings');
    expect(bookings.find((b) => b.status === 'confirmed')).toMatchObject({ staff_member_id: memberId('Kenji Sato'), product_id: productId('Consultation') });
    expect(await list(token, 'expenses')).toHaveLength(2);
    const logs = await list(token, `work-logs?member_id=${memberId('Rosa Mendes')}`);
    expect(logs).toEqual([expect.objectContaining({ minutes: 150, project_id: relaunch.id, task_id: tasks.find((t) => t.title.startsWith('Draft')).id })]);
  });

  it('refuses a file with problems anywhere, names every one of them, and writes nothing', async () => {
    const org = await h.createOrganization();
    const file = example();
    file.customers!.at(-1)!.email = 'ines.costa-at-mail.example';
    file.tasks![1]!.assignee_ref = 'mem-nobody';
    file.products![3]!.ref = 'prd-consult';
    file.events![1]!.attendee_refs = ['mem-olivia', 'mem-ghost'];
    file.invoices![0]!.total_cents = 80_000;
    (file.work_logs![2] as Record<string, unknown>).hours = 1;
    file.projects![0]!.description = 'half a pair: \ud83d';
    const before = await rowCounts(org.organization.id);

    const error = await refusal(importData(h.db, org.organization.id, file));
    expect(error.details.fields).toEqual([
      { field: 'projects[0].description', message: 'must be well-formed Unicode (no lone surrogates)' },
      { field: 'products[3].ref', message: 'duplicate ref "prd-consult": products[0] has it already' },
      { field: 'tasks[1].assignee_ref', message: 'no team member has ref "mem-nobody" in this file' },
      { field: 'customers[2].email', message: expect.stringMatching(/invalid email/i) },
      { field: 'events[1].attendee_refs[1]', message: 'no team member has ref "mem-ghost" in this file' },
      { field: 'invoices[0].total_cents', message: '80000 is not the sum of the lines, 80750' },
      { field: 'work_logs[2].hours', message: 'unknown field' },
    ]);
    expect(error.message).toContain('7 problems; nothing was imported');
    expect(error.message).toContain('customers[2].email');
    expect(await rowCounts(org.organization.id)).toEqual(before);
  });

  it('refuses invoice numbers the organization has already, before writing anything', async () => {
    const org = await h.createOrganization();
    await importData(h.db, org.organization.id, example());
    const again = await refusal(importData(h.db, org.organization.id, example()));
    expect(again.details.fields.map((f) => f.field)).toEqual(['invoices[0].number', 'invoices[1].number']);
    expect(await rowCounts(org.organization.id)).toEqual(exampleCounts);
  });

  it('writes all or nothing: a failure while writing the last kind leaves nothing behind', async () => {
    const org = await h.createOrganization();
    const trigger = `refuse_work_logs_${org.organization.id}`;
    // A write the database refuses after every other kind went in: only a rollback can undo them.
    await h.db.query(`CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.org_id = '${org.organization.id}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await h.db.query(`CREATE TRIGGER ${trigger} BEFORE INSERT ON work_logs FOR EACH ROW EXECUTE FUNCTION ${trigger}()`);
    try {
      await expect(importData(h.db, org.organization.id, example())).rejects.toThrow('refused by the test');
    } finally {
      await h.db.query(`DROP TRIGGER ${trigger} ON work_logs`);
      await h.db.query(`DROP FUNCTION ${trigger}()`);
    }
    expect(Object.values(await rowCounts(org.organization.id)).every((n) => n === 0)).toBe(true);
  });

  it('lands in the given organization only', async () => {
    const [mine, theirs] = [await h.createOrganization(), await h.createOrganization()];
    await importData(h.db, mine.organization.id, example());
    expect(Object.values(await rowCounts(theirs.organization.id)).every((n) => n === 0)).toBe(true);
    expect(await list(theirs.readOnlyToken, 'customers')).toEqual([]);
    const [customer] = await list(mine.readOnlyToken, 'customers');
    expect((await h.request({ method: 'GET', url: `/api/v1/customers/${customer.id}`, token: theirs.readOnlyToken })).statusCode).toBe(404);
  });
});

describe('gatehouse seed', () => {
  it('small fills every kind, within the organization, and customers sync incrementally', async () => {
    const org = await h.createOrganization();
    const since = new Date(Date.now() - 60_000).toISOString();
    const counts = await seedOrganization(h.db, org.organization, { size: 'small', seed: 7 });
    expect(counts).toEqual(seedSizes.small);
    expect(await rowCounts(org.organization.id)).toEqual(seedSizes.small);
    for (const kind of importKinds) expect(counts[kind]).toBeGreaterThan(0);

    const { rows } = await h.db.query(
      `SELECT count(*)::int AS n FROM tasks t JOIN team_members m ON m.id = t.assignee_id WHERE t.org_id = $1 AND m.org_id <> $1`,
      [org.organization.id],
    );
    expect(rows[0].n).toBe(0);
    const synced = await list(org.readOnlyToken, `customers?updated_since=${since}&limit=200`);
    expect(new Set(synced.map((c) => c.id)).size).toBe(seedSizes.small.customers);

    // Seeding again continues the invoice numbers rather than clashing with them.
    const again = await seedOrganization(h.db, org.organization, { size: 'small', seed: 8 });
    expect(again.invoices).toBe(seedSizes.small.invoices);
  });

  it('generates the same data for the same seed and day, and other data for another seed', () => {
    const today = new Date('2026-03-10T12:00:00Z');
    const one = generateDemoData({ size: 'small', seed: 1, today });
    expect(generateDemoData({ size: 'small', seed: 1, today })).toEqual(one);
    expect(generateDemoData({ size: 'small', seed: 2, today }).customers).not.toEqual(one.customers);
    const dueDates = one.tasks!.flatMap((task) => (task.due_on ? [task.due_on] : []));
    expect(dueDates.some((day) => day < '2026-03-10') && dueDates.some((day) => day > '2026-03-10')).toBe(true);
  });

  it('large has at least 10,000 customers and 50,000 tasks, and the import would accept it (generated, not written)', () => {
    const large = validateDataFile(generateDemoData({ size: 'large', seed: 1 }));
    expect(large.customers!.length).toBeGreaterThanOrEqual(10_000);
    expect(large.tasks!.length).toBeGreaterThanOrEqual(50_000);
    for (const kind of importKinds) expect(large[kind]!.length).toBeGreaterThanOrEqual(seedSizes.small[kind]);
  });
});

describe('gatehouse import and seed from the CLI', () => {
  const env = () => cleanEnv({ DATABASE_URL: inject('databaseUrl') });

  it('import and seed print counts with --json; a refused file names its problems and exits 1', async () => {
    const org = await h.createOrganization();
    const slug = org.organization.slug;
    const imported = await runCli(['import', '--org', slug, '--file', examplePath.pathname, '--json'], env());
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    expect(imported.json).toMatchObject({ organization: slug, counts: exampleCounts });

    const seeded = await runCli(['seed', '--org', slug, '--size', 'small', '--seed', '3', '--json'], env());
    expect(seeded.code, seeded.stdout + seeded.stderr).toBe(0);
    expect(seeded.json).toMatchObject({ organization: slug, size: 'small', seed: 3, counts: seedSizes.small });

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ customers: [{ ref: 'c', name: 'Ann', email: 'nope' }], tasks: [{ ref: 't', title: 'x', project_ref: 'p' }] }));
    const refused = await runCli(['import', '--org', slug, '--file', bad, '--json'], env());
    expect(refused.code).toBe(1);
    expect(refused.json.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['tasks[0].project_ref', 'customers[0].email']);
    const human = await runCli(['import', '--org', slug, '--file', bad], env());
    expect(human.stderr).toMatch(/2 problems; nothing was imported:\n {2}tasks\[0\]\.project_ref: no project has ref "p"/);
    expect(await rowCounts(org.organization.id)).toEqual(
      Object.fromEntries(importKinds.map((kind) => [kind, exampleCounts[kind] + seedSizes.small[kind]])),
    );
  });
});
