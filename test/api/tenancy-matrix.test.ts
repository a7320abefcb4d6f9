import { createPersonalToken } from '../../domain/identity/people';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAllowed } from '../../api/catalog/access';
import { catalog } from '../../api/catalog/index';
import { isOfferedOn, type Operation } from '../../api/catalog/operation';
import type { Caller } from '../../domain/identity/actors';
import type { CallInterface } from '../../domain/usage/call-log';
import { authenticate } from '../../domain/identity/authenticate';
import { newId } from '../../domain/kit/ids';
import { consoleCredential, mcpCredential, restCredential, type Answer, type Credential, type Shape } from '../support/cross-tenant-calls';
import { fieldOf, ghostId, inputOf, probesOf, probePrefixes, type Holdings, type Probe } from '../support/cross-tenant-probes';
import { startHarness, type Harness } from '../support/harness';
import { digestOf, furnish, idsOf, markTexts, rowsOf, settledDigestOf, type Tenant } from '../support/tenant-estate';

// The cross-tenant matrix: every operation of the catalog, on every interface and route shape that offers it, called
// by organization A with organization B's ids, references and slug. Generated from the catalog, so an operation is
// probed the day it is added; a probe that could not be made or never ran fails the coverage test.
//
// A refusal must be one of ours, in the envelope, and tell nothing: the same answer as for an id that was never
// issued (an answer that differs would tell A that B's record exists). A's policy allows every write, so a leak
// would be applied; B's rows are compared before and after.

/** A's policy: every write allowed (a leak would be written), and titles starting with "review" held, for A's own review. */
const policyOfA = `
@id("allow-writes") @reason("Every write of the matrix is allowed, so that a leak would be applied")
permit (principal, action, resource);

@id("hold-reviews") @decision("review") @reason("A write of its own held for review, for the controls")
permit (principal, action, resource) when { resource has title && resource.title like "review*" };
`;

const { probes, problems: unprobed } = probesOf(catalog);

const restShapes: Shape[] = ['implicit', 'own slug', 'other slug'];
const viaOf = (shape: Shape): CallInterface => (shape === 'mcp' ? 'mcp' : shape === 'console' ? 'console' : 'rest');
const shapesOf = (operation: Operation): Shape[] => [
  ...(isOfferedOn(operation, 'rest') ? restShapes : []),
  ...(isOfferedOn(operation, 'mcp') ? (['mcp'] as const) : []),
  ...(isOfferedOn(operation, 'console') ? (['console'] as const) : []),
];

let h: Harness;
/** The caller. */
let a: Tenant;
/** The other organization. */
let b: Tenant;
/** What A must never read: every id of B's rows, its slug, name, tokens and sessions, and the marker in all its text. */
let secrets: string[];
let digestBefore: Record<string, string[]>;
const credentials: Record<CallInterface, Credential[]> = { rest: [], mcp: [], console: [] };
let mcpKeys: { name: string; caller: Caller; client: McpClient }[];

interface Executed {
  shape: Shape;
  probe: Probe;
  credential: string;
  outcome: string;
  /** Whether B's ids or slug were sent, and so the same call made with never-issued ones. */
  twinned: boolean;
}
const executed: Executed[] = [];

beforeAll(async () => {
  h = await startHarness();
  const marker = `zq${randomUUID().slice(0, 8)}`;
  const [orgA, orgB] = await Promise.all([h.createOrganization({ policy: policyOfA }), h.createOrganization({ name: `Other ${marker}` })]);
  [a, b] = await Promise.all([furnish(h, orgA, ['owner', 'reviewer']), furnish(h, orgB, ['member'])]);
  await markTexts(h.db, orgB.organization.id, marker);

  const caller = (token: string) => authenticate(h.db, `Bearer ${token}`);
  // The organization's settings over REST (webhooks) are for owners and admins.
  const ownerToken = (await createPersonalToken(h.db, a.people.find((signedIn) => signedIn.role === 'owner')!.person.user)).token;
  credentials.rest = await Promise.all(
    (
      [
        ['read-write key', orgA.readWriteToken],
        ['read-only key', orgA.readOnlyToken],
        ["reviewer's personal token", orgA.reviewerToken],
        ["member's personal token", orgA.memberToken],
        ["owner's personal token", ownerToken],
      ] as const
    ).map(async ([name, token]) => restCredential(name, await caller(token), token, (options) => h.request(options))),
  );
  mcpKeys = [
    { name: 'read-write key', caller: await caller(orgA.readWriteToken), client: a.mcp },
    { name: 'read-only key', caller: await caller(orgA.readOnlyToken), client: await h.mcp(orgA.readOnlyToken) },
  ];
  credentials.mcp = mcpKeys.map(({ name, caller: key, client }) => mcpCredential(name, key, client));
  credentials.console = a.people.map((signedIn) => consoleCredential(`${signedIn.role} (console)`, signedIn.caller, signedIn.session));

  const { organization } = orgB;
  secrets = [
    ...(await idsOf(h.db, organization.id)),
    organization.slug,
    organization.name,
    marker,
    orgB.readWriteToken,
    orgB.readOnlyToken,
    orgB.reviewerToken,
    orgB.memberToken,
    ...b.people.map((signedIn) => signedIn.session.cookie.split('=')[1]!),
  ];
  digestBefore = await settledDigestOf(h.db, organization.id);
}, 120_000);

afterAll(async () => {
  if (executed.length) console.log(summary());
  await h?.close();
});

/** A fresh id of every kind, never issued: what B's ids must be indistinguishable from. */
const ghostHoldings = (): Holdings => Object.fromEntries(probePrefixes.map((prefix) => [prefix, ghostId(prefix)]));

/** The probe through one interface as one of A's credentials, and the same with ids that do not exist. */
async function runCase(shape: Shape, probe: Probe, credential: Credential): Promise<string[]> {
  const { operation } = probe;
  const where = `${shape} ${operation.name} (${probe.label}) as ${credential.name}`;
  const otherSlug = b.test.organization.slug;
  const slugOf = (other: string) => (shape === 'other slug' ? other : a.test.organization.slug);

  const answer = await credential.call(operation, inputOf(probe, b.holdings, a.holdings), { shape, slug: slugOf(otherSlug) });
  const sentIds = probe.foreign.map((slot) => b.holdings[slot.prefix]!);
  // An applied write's id (its workflow id) holds its organization's slug: sending it, A sent the slug too.
  const sent = [...sentIds, ...(shape === 'other slug' || sentIds.some((id) => id.includes(otherSlug)) ? [otherSlug] : [])];
  const outcome = answer.ok ? `${answer.status}` : `${answer.status} ${answer.code ?? '?'}`;
  executed.push({ shape, probe, credential: credential.name, outcome, twinned: sent.length > 0 });
  const problems = judge(shape, probe, answer, sent);

  if (sent.length) {
    const ghosts = ghostHoldings();
    const ghostSlug = `org-ghost-${randomUUID().slice(0, 8)}`;
    const ghost = await credential.call(operation, inputOf(probe, ghosts, a.holdings), { shape, slug: slugOf(ghostSlug) });
    const seen = normalized(answer, b.holdings, otherSlug, probe);
    const unseen = normalized(ghost, ghosts, ghostSlug, probe);
    if (seen !== unseen) problems.push(`answers otherwise than for ids that do not exist, so it tells that B's exist:\n    B's:   ${seen}\n    none:  ${unseen}`);
  }
  return problems.map((problem) => `${where}: ${problem}`);
}

/** The answer with the ids and slug sent put back to placeholders, for comparing B's answer with a ghost's. */
function normalized(answer: Answer, holdings: Holdings, slug: string, probe: Probe): string {
  // The ids first: an applied write's id holds the slug.
  let text = `${answer.status} ${answer.text}`;
  for (const slot of probe.foreign) text = text.replaceAll(holdings[slot.prefix]!, `<${slot.prefix}>`);
  return text.replaceAll(slug, '<slug>');
}

interface Expectation {
  what: string;
  met(answer: Answer): boolean;
}

const refusedWith = (code: string, status: number) => (answer: Answer) => !answer.ok && answer.code === code && answer.status === status;

function expectationOf(shape: Shape, probe: Probe): Expectation {
  if (shape === 'other slug') return { what: '404 organization_mismatch', met: refusedWith('organization_mismatch', 404) };
  // An undo reaches A's own write once; the controls of its other shapes find it undone already (409).
  if ((probe.kind === 'control' || probe.kind === 'own') && probe.operation.name.startsWith('writes.undo')) {
    return { what: 'a 2xx answer, or 409 undone already', met: (answer) => answer.ok || refusedWith('conflict', 409)(answer) };
  }
  switch (probe.kind) {
    case 'path':
      return {
        what: '404 not_found about the record (naming its id)',
        met: (answer) => refusedWith('not_found', 404)(answer) && probe.foreign.some((slot) => answer.message.includes(b.holdings[slot.prefix]!)),
      };
    case 'control':
      // (A changeset's control holds the stale If-Match in its item.)
      return 'if_match' in probe.base || probe.label.endsWith('stale If-Match') ? { what: '409 conflict for the stale If-Match', met: refusedWith('conflict', 409) } : { what: 'a 2xx answer', met: (answer) => answer.ok };
    case 'own':
      // An operation that spends a one-time secret (a Slack link's) gets a made-up one: refused as spent, whoever asks.
      if (probe.operation.kind === 'person_action' && probe.operation.refusals?.includes('link_invalid')) {
        return { what: '410 link_invalid for a made-up secret', met: refusedWith('link_invalid', 410) };
      }
      return { what: 'a 2xx answer', met: (answer) => answer.ok };
    case 'reference': {
      const field = fieldOf(probe.foreign[0]!);
      if (probe.operation.kind === 'read') {
        return {
          what: 'an empty page or a count of none, or 404/422',
          met: (answer) => (answer.ok ? answer.items?.length === 0 || answer.count === 0 : refusedWith('not_found', 404)(answer) || refusedWith('validation_failed', 422)(answer)),
        };
      }
      return { what: `422 validation_failed naming ${field} alone`, met: (answer) => refusedWith('validation_failed', 422)(answer) && answer.fields.join() === field };
    }
  }
}

function judge(shape: Shape, probe: Probe, answer: Answer, sent: string[]): string[] {
  const problems: string[] = [];
  const seen = `${answer.status} ${answer.text.slice(0, 600)}`;
  if (answer.status >= 500 || answer.status === 0) problems.push(`a fault, not an answer: ${seen}`);
  if (!answer.envelope) problems.push(`not in the envelope: ${seen}`);
  const expectation = expectationOf(shape, probe);
  if (!expectation.met(answer)) problems.push(`expected ${expectation.what}, got ${seen}`);
  // A refusal may repeat what the caller sent (its message names the id); anything else of B's is a leak.
  const leaked = secrets.filter((secret) => answer.text.includes(secret) && !(!answer.ok && sent.includes(secret)));
  if (leaked.length) problems.push(`shows B's ${leaked.join(', ')}: ${seen}`);
  return problems;
}

describe.concurrent('A reaches nothing of B', () => {
  for (const probe of probes) {
    for (const shape of shapesOf(probe.operation)) {
      it(`${shape}: ${probe.operation.name} (${probe.label})`, async ({ expect }) => {
        const allowed = credentials[viaOf(shape)].filter((candidate) => isAllowed(probe.operation, candidate.caller));
        const problems = await Promise.all(allowed.map((credential) => runCase(shape, probe, credential)));
        expect(problems.flat()).toEqual([]);
      });
    }
  }
});

describe('MCP beyond the tools', () => {
  it("tools/list offers each of A's keys exactly the tools the access rules allow it", async () => {
    for (const { name, caller, client } of mcpKeys) {
      const { tools } = await client.listTools();
      const allowed = catalog.filter((operation) => isOfferedOn(operation, 'mcp') && isAllowed(operation, caller)).map((operation) => operation.tool);
      expect(tools.map((tool) => tool.name).sort(), name).toEqual(allowed.sort());
    }
  });

  it("B's held write is no MCP task of A's: tasks/get, tasks/result and tasks/cancel answer as for a task that does not exist; tasks/list leaves it out", async () => {
    const tasks = a.mcp.experimental.tasks;
    const asks: Record<string, (id: string) => Promise<unknown>> = {
      'tasks/get': (id) => tasks.getTask(id),
      'tasks/result': (id) => tasks.getTaskResult(id, CallToolResultSchema),
      'tasks/cancel': (id) => tasks.cancelTask(id),
    };
    const answerTo = (ask: (id: string) => Promise<unknown>, id: string) =>
      ask(id).then(
        (result) => `answered ${JSON.stringify(result)}`,
        (error: Error) => `refused ${error.message}`.replaceAll(id, '<id>'),
      );
    for (const [name, ask] of Object.entries(asks)) {
      const other = await answerTo(ask, b.holdings.rev!);
      expect(other, name).toMatch(/^refused /);
      expect(other, name).toBe(await answerTo(ask, newId('rev')));
    }
    const listed = JSON.stringify(await tasks.listTasks());
    expect(listed).toContain(a.holdings.rev);
    expect(secrets.filter((secret) => listed.includes(secret))).toEqual([]);
  });
});

describe('afterwards', () => {
  it('every operation of the catalog was probed on every interface and route shape that offers it', () => {
    expect(unprobed).toEqual([]);
    const missing: string[] = [];
    for (const operation of catalog) {
      const own = probes.filter((probe) => probe.operation === operation);
      if (!own.length) missing.push(`${operation.name}: no probe`);
      for (const shape of shapesOf(operation)) {
        for (const probe of own) {
          if (!executed.some((run) => run.probe === probe && run.shape === shape)) missing.push(`${shape} ${operation.name} (${probe.label}): no credential of A may call it`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('left every row of B as it was: data, decisions, reviews, audit, memories, keys, people, sessions', async () => {
    expect(await digestOf(h.db, b.test.organization.id)).toEqual(digestBefore);
  });

  it("kept B out of A's own rows (decisions, reviews, audit, call log): nothing of B but the ids and slug A sent", async () => {
    const sent = new Set([...Object.values(b.holdings), b.test.organization.slug]);
    const found = (await rowsOf(h.db, a.test.organization.id)).flatMap(({ table, row }) =>
      secrets.filter((secret) => !sent.has(secret) && row.includes(secret)).map((secret) => `${table}: ${secret} in ${row.slice(0, 400)}`),
    );
    expect(found).toEqual([]);
  });
});

/** Operations × shapes × cases, and the refusals seen, for the log. */
function summary(): string {
  const count = <T>(values: T[]) => new Set(values).size;
  const lines = [
    `tenancy matrix: ${count(executed.map((run) => run.probe.operation))} operations, ${probes.length} probes, ${executed.length} cases, ${executed.filter((run) => run.twinned).length} of them sending B's ids or slug and twinned with never-issued ones`,
  ];
  for (const shape of ['implicit', 'own slug', 'other slug', 'mcp', 'console'] as const) {
    const runs = executed.filter((run) => run.shape === shape);
    const outcomes = new Map<string, number>();
    for (const run of runs) outcomes.set(run.outcome, (outcomes.get(run.outcome) ?? 0) + 1);
    const byOutcome = [...outcomes].sort(([x], [y]) => x.localeCompare(y)).map(([outcome, n]) => `${outcome} ×${n}`).join(', ');
    lines.push(`  ${shape.padEnd(10)} ${String(count(runs.map((run) => run.probe.operation))).padStart(3)} operations ${String(runs.length).padStart(4)} cases: ${byOutcome}`);
  }
  return lines.join('\n');
}
