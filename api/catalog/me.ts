import { z } from 'zod';
import { families } from '../../domain/identity/abilities';
import { roles } from '../../domain/identity/actors';
import { dayField, instantField } from '../../domain/kit/fields';
import { isAllowed } from './access';
import { defineOperation, isOfferedOn, templatedPath, type Operation } from './operation';

const meOutput = z.object({
  organization: z
    .object({
      id: z.string().describe('The organization id (org_…)'),
      slug: z.string().describe('Used in explicit-organization paths: /v1/organizations/{slug}/…'),
      name: z.string().describe("The organization's display name"),
      timezone: z
        .string()
        .describe('IANA time zone, e.g. Europe/Berlin; the calendar feed places task due dates (all-day items) in this zone'),
    })
    .describe("The token's organization"),
  plan: z
    .object({
      name: z.string().describe("The plan's name, e.g. free, pro or business"),
      description: z.string().describe('What the plan is for'),
      features: z
        .array(z.string())
        .describe('Features the plan includes, e.g. expenses, work_logs; operations that need a missing one answer 403 feature_not_in_plan'),
      daily_budget: z
        .number()
        .int()
        .nonnegative()
        .describe("Requests a day for the whole organization, REST and MCP together; past it, requests answer 429 rate_limited until midnight in the organization's time zone"),
      rest_per_minute: z
        .number()
        .int()
        .nonnegative()
        .describe('REST requests a minute per token (each API key and personal token counts on its own), per UTC minute; past it, 429 rate_limited'),
      mcp_per_minute: z
        .number()
        .int()
        .nonnegative()
        .describe('MCP requests (each POST to /mcp) a minute per API key, counted apart from REST, per UTC minute; past it, 429 rate_limited'),
      pending_review_cap: z
        .number()
        .int()
        .nonnegative()
        .describe('Writes that may wait for review at once; past it, a write the policy would hold is refused with 429 review_queue_full'),
    })
    .describe("The organization's plan: its features and its limits"),
  usage: z
    .object({
      date: dayField("The organization's local date: the day the budget counts"),
      used: z.number().int().nonnegative().describe('Requests counted today, REST and MCP together, this one included'),
      left: z.number().int().nonnegative().describe("Requests left in today's budget"),
      resets_at: instantField("When the budget starts again: the next midnight in the organization's time zone"),
    })
    .describe("Today's use of the organization's daily budget"),
  token: z
    .discriminatedUnion('type', [
      z.object({
        type: z.literal('api_key').describe('api_key: the token is an API key (gate_k_…)'),
        id: z.string().describe('The API key id (key_…)'),
        label: z.string().describe("The key's label, as given when it was created"),
        access: z.enum(['read', 'read_write']).describe('read (reads only) or read_write (may also submit gated writes)'),
        abilities: z
          .array(z.string())
          .describe('What the key may reach, as <family>.read or <family>.write, e.g. tasks.read; .write needs read_write access'),
      }),
      z.object({
        type: z.literal('personal').describe("personal: the token is a person's personal token (gate_p_…)"),
        id: z.string().describe('The personal token id (pat_…)'),
        user: z
          .object({
            id: z.string().describe('The user id (usr_…)'),
            email: z.string().describe("The person's sign-in email"),
            role: z.enum(roles).describe('owner, admin, reviewer or member; owners, admins and reviewers may decide reviews'),
          })
          .describe('The person the token acts as'),
      }),
    ])
    .describe('Who this token is: an API key with its access and abilities, or a person with a role'),
  endpoints: z
    .array(
      z.object({
        family: z.string().describe('The family name, e.g. tasks; API keys reach it with the <family>.read ability (and <family>.write for its writes)'),
        description: z.string().describe('What the family holds'),
        operations: z
          .array(
            z.object({
              name: z.string().describe('The operation name, e.g. tasks.create (the OpenAPI operationId with _ for .)'),
              method: z.string().describe('The HTTP method: GET, POST, PATCH or DELETE'),
              path: z.string().describe('Relative to the REST base, e.g. /v1/tasks/{id}'),
              allowed: z.boolean().describe('Whether this token may call it'),
            }),
          )
          .describe("The family's operations"),
      }),
    )
    .describe('The endpoint families of the API and what this token may call'),
});

/** Each operation's path as discovery shows it, made once. */
const paths = new Map<Operation, string>();
function pathOf(operation: Operation): string {
  let path = paths.get(operation);
  if (path === undefined) paths.set(operation, (path = templatedPath(operation.path)));
  return path;
}

export const getMe = defineOperation({
  kind: 'read',
  name: 'me.get',
  tool: 'whoami',
  family: 'me',
  summary: 'Who am I',
  description:
    "Discovery: the token's organization, its plan's features and limits, today's use of the daily request budget, the token's access level and abilities, and the endpoint families of the API.",
  method: 'GET',
  path: '/me',
  list: false,
  input: z.strictObject({}),
  output: meOutput,
  access: { apiKey: { ability: null }, person: { roles } },
  // A token's discovery; the console asks /console/api/session who is signed in.
  interfaces: ['rest', 'mcp'],
  async handler(_input, { caller, catalog, limits, usage: counted }) {
    const { organization, actor, plan } = caller;
    const usage = counted ?? (await limits.dailyUsage(caller));
    const byFamily = new Map<string, { name: string; method: string; path: string; allowed: boolean }[]>();
    for (const operation of catalog) {
      if (operation.family === 'me' || !isOfferedOn(operation, 'rest')) continue;
      const list = byFamily.get(operation.family) ?? [];
      list.push({ name: operation.name, method: operation.method, path: pathOf(operation), allowed: isAllowed(operation, caller) });
      byFamily.set(operation.family, list);
    }
    return {
      organization: { id: organization.id, slug: organization.slug, name: organization.name, timezone: organization.timezone },
      plan: {
        name: plan.name,
        description: plan.description,
        features: plan.features,
        daily_budget: plan.dailyBudget,
        rest_per_minute: plan.restPerMinute,
        mcp_per_minute: plan.mcpPerMinute,
        pending_review_cap: plan.pendingReviewCap,
      },
      usage: { date: usage.date, used: usage.used, left: usage.left, resets_at: usage.resetsAt.toISOString() },
      token:
        actor.kind === 'api_key'
          ? { type: 'api_key', id: actor.keyId, label: actor.label, access: actor.access, abilities: actor.abilities }
          : { type: 'personal', id: actor.credential.id, user: { id: actor.userId, email: actor.email, role: actor.role } },
      endpoints: [...byFamily].map(([family, operations]) => ({
        family,
        description: families[family as keyof typeof families]?.description ?? family,
        operations,
      })),
    };
  },
});
