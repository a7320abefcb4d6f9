import { createPersonalToken, createUser } from '../../domain/identity/people';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalog } from '../../api/catalog';
import { insertFixtures, type Fixtures } from '../support/fixtures';
import { protocolCases, randomArguments, toolArgumentCases, transportCases } from '../support/fuzz/mcp-cases';
import { orgState, writesBetween } from '../support/fuzz/org-digest';
import { authorizationCases, buildCase, fieldCases, organizationCases, randomCase, type RestFuzzContext } from '../support/fuzz/rest-cases';
import { restRoutes, type RestRoute } from '../support/fuzz/rest-routes';
import { fuzzRun, type FuzzRun } from '../support/fuzz/run';
import { sampleEach } from '../support/fuzz/sampling';
import { wireCases } from '../support/fuzz/wire-cases';
import { startHarness, type Harness, type TestOrganization } from '../support/harness';

// The fuzz suite: requests generated from what the service serves (the OpenAPI document, the MCP tools' input
// schemas), malformed in every way their schemas rule out and at random, each answer checked: never a 5xx, every
// REST answer in the envelope, every MCP answer JSON-RPC with the right code, and nothing written by any of it.
// The fuzzed organizations' policy denies every write, so that whatever gets past validation is refused too, the
// same way every run: their data must not change, and the gate may record only the policy's denials.
//
// FUZZ_RUNS sets the size: random cases per route and per tool, and at most that many of the schema-derived cases
// per field, parameter or header (npm test: 1, every dimension covered once; npm run chaos: more, up to all of
// them). FUZZ_SEED replays a run; FUZZ_REPORT names a file to append the findings to.

const runs = Number(process.env.FUZZ_RUNS ?? 1);
const seed = Number(process.env.FUZZ_SEED ?? 20_250_101);
/** A group's time grows with FUZZ_RUNS; at npm test's size each takes seconds. */
const groupTimeout = 60_000 + runs * 30_000;

const writesNothing = `@id("allow-writes") @reason("Ordinary writes are allowed")
permit (principal, action, resource);

@id("fuzz-writes-nothing") @reason("The fuzzed organization writes nothing")
forbid (principal, action, resource);`;

/** The family's fixture for each path of the document: its records are real, so gated writes reach the policy. */
const fixtureOfPath: [RegExp, keyof Fixtures][] = [
  [/\/tasks\//, 'task'],
  [/\/projects\//, 'project'],
  [/\/customers\//, 'customer'],
  [/\/calendar\/events\//, 'event'],
  [/\/invoices\//, 'invoice'],
  [/\/products\//, 'product'],
  [/\/bookings\//, 'booking'],
  [/\/expenses\//, 'expense'],
  [/\/work-logs\//, 'workLog'],
  [/\/meeting-ingests\//, 'meetingIngest'],
];

let h: Harness;
let baseUrl: string;
let org: TestOrganization;
let routes: RestRoute[];
let tools: Tool[];
let context: RestFuzzContext;
let run: FuzzRun;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.listen();
  const plan = `fuzz-${process.pid}-${Date.now().toString(36)}`;
  // Limits far above what the suite sends, with every feature: a 429 or a 403 feature_not_in_plan would hide the operation.
  await h.db.query(
    `INSERT INTO plans (name, daily_budget, rest_per_minute, mcp_per_minute, pending_review_cap, features, description)
     VALUES ($1, 10000000, 1000000, 1000000, 1000, '{expenses,work_logs}', 'the fuzz suite''s plan')`,
    [plan],
  );
  org = await h.createOrganization({ plan, policy: writesNothing });
  // Its key is one of the fuzzing credentials (the wrong tenant), so its organization must stay unwritten too.
  const other = await h.createOrganization({ plan, policy: writesNothing });
  const fx = await insertFixtures(h.db, org.organization.id);
  const personActions = new Set(catalog.filter((operation) => !operation.access.apiKey).map((operation) => operation.name.replace(/\./g, '_')));
  // What reviewers may not do (the organization's webhooks) is fuzzed with an owner's token.
  const ownersOnly = new Set(
    catalog.filter((operation) => !operation.access.apiKey && !operation.access.person?.roles.includes('reviewer')).map((operation) => operation.name.replace(/\./g, '_')),
  );
  const owner = await createUser(h.db, { orgId: org.organization.id, email: `owner@${org.organization.slug}.test`, role: 'owner' });
  const ownerToken = (await createPersonalToken(h.db, owner)).token;
  context = {
    tokenFor: (route) => {
      const name = route.operationId.replace(/_in_organization$/, '');
      return ownersOnly.has(name) ? ownerToken : personActions.has(name) ? org.reviewerToken : org.readWriteToken;
    },
    otherTokens: [org.readOnlyToken, org.memberToken, org.reviewerToken, other.readWriteToken],
    slug: org.organization.slug,
    otherSlug: other.organization.slug,
    recordId: (route) => {
      const family = fixtureOfPath.find(([pattern]) => pattern.test(`${route.template}/`));
      return family ? fx[family[1]] : `rev_${'0'.repeat(26)}`;
    },
    recordIds: Object.values(fx),
  };
  routes = restRoutes((await h.app.inject({ method: 'GET', url: '/api/openapi.json' })).json());
  tools = (await (await h.mcp(org.readWriteToken)).listTools()).tools;
  run = fuzzRun({ app: h.app, db: h.db, baseUrl, orgIds: [org.organization.id, other.organization.id], concurrency: 6, report: process.env.FUZZ_REPORT });
  console.log(`fuzz: FUZZ_RUNS=${runs} FUZZ_SEED=${seed}; ${routes.length} REST routes, ${tools.length} MCP tools`);
});
afterAll(() => h?.close());

describe('fuzz: REST, from the served OpenAPI document', () => {
  it('the document serves every operation in both route shapes', () => {
    const shapes = (explicit: boolean) =>
      routes.filter((route) => route.explicitOrganization === explicit).map((route) => `${route.method} ${route.template.replace('/organizations/{slug}', '')}`);
    expect(shapes(true).sort()).toEqual(shapes(false).sort());
    expect(shapes(false).length).toBeGreaterThan(40);
  });

  it('the check for writes sees one: an allowed write changes the digest', async () => {
    const allowed = await h.createOrganization();
    const before = await orgState(h.db, [allowed.organization.id]);
    const created = await h.request({ method: 'POST', url: '/api/v1/tasks', token: allowed.readWriteToken, payload: { title: 'fuzz control' } });
    expect(created.statusCode).toBe(201);
    expect(writesBetween(before, await orgState(h.db, [allowed.organization.id]), 0)).toEqual(expect.arrayContaining([expect.stringMatching(/^tasks changed/)]));
  });

  it('each field, parameter and header malformed: refused in the envelope, nothing written', async () => {
    const all = routes.flatMap((route) =>
      route.explicitOrganization ? organizationCases(route, context) : [...fieldCases(route, context), ...authorizationCases(route, context)],
    );
    await run.group('REST fields, parameters, headers', sampleEach(all, runs, seed), run.rest);
  }, groupTimeout);

  it('random requests for every route, both shapes (fast-check): no 5xx, every answer in the envelope, nothing written', async () => {
    const cases = routes.flatMap((route, index) => fc.sample(randomCase(route, context), { seed: seed + index, numRuns: runs }));
    await run.group(`REST random (${runs} per route, seed ${seed})`, cases, run.rest);
  }, groupTimeout);

  it('methods no route has: 404 or 405 in the envelope', async () => {
    const byTemplate = new Map(routes.map((route) => [route.template, route]));
    const cases = [...byTemplate.values()].flatMap((route) =>
      ['PUT', 'OPTIONS', 'TRACE'].map((method) => buildCase(route, context, { label: `(${method})`, method, body: route.body ? { json: {} } : undefined })),
    );
    const tally = await run.group('REST unknown methods', cases, run.rest);
    expect([...tally.statuses.keys()].filter((status) => !/^40[45] /.test(status))).toEqual([]);
  }, groupTimeout);
});

describe('fuzz: HTTP on the wire (a real socket, through Node’s own parser)', () => {
  it('bad percent-encoding, over-long ids, header blocks past the limit, bodies past the limit, unknown methods, broken framing', async () => {
    await run.group('HTTP on the wire', sampleEach(wireCases(routes, context, baseUrl), runs, seed), run.wire);
  }, groupTimeout);
});

describe('fuzz: MCP, from tools/list', () => {
  it('malformed JSON-RPC and MCP messages: the JSON-RPC error each must get', async () => {
    const cases = [
      ...protocolCases({ key: org.readWriteToken, readOnlyKey: org.readOnlyToken }),
      ...transportCases({ key: org.readWriteToken, personal: org.reviewerToken }),
    ];
    await run.group('MCP protocol', cases, run.mcp);
  }, groupTimeout);

  it("each tool's arguments malformed against its input schema: an error result in our words or -32602, nothing written", async () => {
    const cases = sampleEach(tools.flatMap((tool) => toolArgumentCases(tool, org.readWriteToken)), runs, seed);
    await run.group('MCP tool arguments', cases, run.mcp);
  }, groupTimeout);

  it('random arguments for every tool through the SDK client (fast-check): no fault, nothing written', async () => {
    const client = await h.mcp(org.readWriteToken);
    // The client checks structured content against the output schemas tools/list gave it.
    await client.listTools();
    const cases = tools.flatMap((tool, index) => fc.sample(randomArguments(tool), { seed: seed + 1000 + index, numRuns: runs }).map((args) => ({ tool, args })));
    await run.group(`MCP random, SDK client (${runs} per tool, seed ${seed})`, cases, (tally, { tool, args }) => run.callTool(tally, client, tool, args));
  }, groupTimeout);
});
