import { z } from 'zod';
import { roles, rolesThat, type PersonActor } from '../../domain/identity/actors';
import { text } from '../../domain/kit/fields';
import { pageInput } from '../../domain/kit/pagination';
import {
  correctMemory,
  correctMemoryInput,
  forgetMemoryForKey,
  forgetMemoryInput,
  listMemoriesOfAllKeys,
  memorySchema,
  peopleMemoriesInput,
} from '../../domain/resources/memories';
import { activityRanges, callActivity } from '../../domain/usage/call-activity';
import { agentDays, callOutcomes, listAgentCalls } from '../../domain/usage/call-log';
import { keyBudgetsToday } from '../../domain/usage/key-budgets';
import { listTasksWaitingOnReview } from '../../domain/usage/mcp-tasks';
import { defineOperation } from './operation';

// The Agent Command Center: what agents are doing and what they remember, for people in the console.

const everyone = { person: { roles } };
const consoleOnly = ['console'] as const;
const userOf = (actor: unknown) => (actor as PersonActor).userId;

export const listAgentsOperation = defineOperation({
  kind: 'read',
  name: 'agents.list',
  family: 'agents',
  summary: "Each API key's day",
  description:
    "Every key with its calls today (in the organization's time zone), its writes applied, held and denied today, its last use, its share of the daily budget, and what it used today of its own budgets (a daily request budget, daily caps of writes by operation) where it has them.",
  method: 'GET',
  path: '/agents',
  list: false,
  input: z.strictObject({}),
  output: z.array(
    z.object({
      api_key_id: z.string(),
      label: z.string(),
      access: z.string(),
      state: z.enum(['active', 'revoked', 'expired']),
      last_used_at: z.string().nullable(),
      calls_today: z.number().int(),
      applied_today: z.number().int(),
      held_today: z.number().int(),
      denied_today: z.number().int(),
      budget_share: z.number().describe("The key's calls today over the organization's daily budget, 0 to 1"),
      oauth_client_id: z.string().nullable().describe('The client a person connected over OAuth, when the key is one (its label is the client\'s name); null for a key made as a key'),
      request_budget: z
        .object({ used: z.number().int(), budget: z.number().int() })
        .nullable()
        .describe("The key's requests counted today against its own daily budget (refused ones included); null: it has none"),
      write_caps: z
        .array(z.object({ operation: z.string(), used: z.number().int(), cap: z.number().int() }))
        .describe('Each capped operation: the writes submitted today (refused ones included) and the cap'),
    }),
  ),
  access: everyone,
  interfaces: consoleOnly,
  handler: async (_input, { db, caller, limits }) => {
    const [days, budgets] = await Promise.all([agentDays(db, caller.organization, caller.plan.dailyBudget), keyBudgetsToday(db, caller.organization, limits.clock())]);
    return days.map((day) => {
      const budget = budgets.get(day.api_key_id);
      return { ...day, request_budget: budget?.requests ?? null, write_caps: budget?.writes ?? [] };
    });
  },
});

export const listAgentCallsOperation = defineOperation({
  kind: 'read',
  name: 'agents.calls',
  family: 'agents',
  summary: "The agents' calls",
  description: 'Every REST and MCP call of the organization, newest first: key, interface, operation, how it ended (ok, applied, held, denied, refused, error) and latency.',
  method: 'GET',
  path: '/agents/calls',
  list: true,
  input: z.strictObject({
    api_key_id: text({ max: 100 }).optional(),
    interface: z.enum(['rest', 'mcp']).optional(),
    outcome: z.enum(callOutcomes).optional(),
    ...pageInput,
  }),
  output: z.array(
    z.object({
      id: z.string(),
      api_key_id: z.string().nullable(),
      api_key_label: z.string().nullable().describe('null: a person with a personal token'),
      interface: z.enum(['rest', 'mcp']),
      operation: z.string(),
      outcome: z.enum(callOutcomes),
      code: z.string().describe('ok, applied, pending_review, policy_denied, or the error code'),
      status: z.number().int(),
      latency_ms: z.number(),
      created_at: z.string(),
    }),
  ),
  access: everyone,
  interfaces: consoleOnly,
  handler: (input, { db, caller }) => listAgentCalls(db, caller.organization.id, input),
});

export const agentActivityOperation = defineOperation({
  kind: 'read',
  name: 'agents.activity',
  family: 'agents',
  summary: "The agents' calls over time",
  description:
    "The agents' REST and MCP calls over the last 24 hours (by the hour) or the last 7 days (by the organization's calendar day), counted by how they ended (ok, applied, held, denied, refused, error); every hour or day is listed, quiet ones with zeros. One key's calls when api_key_id is given (404 when the organization has no such key).",
  method: 'GET',
  path: '/agents/activity',
  list: false,
  input: z.strictObject({
    range: z.enum(activityRanges).default('24h').describe('24h: the last 24 hours, by the hour; 7d: the last 7 days, by the day'),
    api_key_id: text({ max: 100 }).optional().describe("Only this key's calls (key_…)"),
  }),
  output: z.object({
    range: z.enum(activityRanges),
    bucket: z.enum(['hour', 'day']).describe('How long each bucket is'),
    timezone: z.string().describe("The organization's time zone, in which its days begin"),
    buckets: z
      .array(
        z.object({
          start: z.string().describe('When the hour or day begins (RFC 3339)'),
          calls: z.number().int().describe('All calls of the bucket'),
          ok: z.number().int().describe('Reads answered'),
          applied: z.number().int().describe('Writes applied'),
          held: z.number().int().describe('Writes held for a review'),
          denied: z.number().int().describe('Writes the policy denied'),
          refused: z.number().int().describe('Calls refused (bad input, no access, over a budget…)'),
          error: z.number().int().describe('Calls that failed on our side'),
        }),
      )
      .describe('Oldest first'),
  }),
  access: everyone,
  interfaces: consoleOnly,
  handler: (input, { db, caller }) => callActivity(db, caller.organization, input),
});

export const listAgentMemoriesOperation = defineOperation({
  kind: 'read',
  name: 'agents.memories',
  family: 'agents',
  summary: 'What agents remember',
  description: "Every key's memories, newest first (or one key's); each key sees only its own, people who may see memories see them all.",
  method: 'GET',
  path: '/agents/memories',
  list: true,
  input: peopleMemoriesInput,
  output: z.array(memorySchema),
  access: { person: { roles: rolesThat.seeMemories } },
  interfaces: consoleOnly,
  handler: (input, { db, caller }) => listMemoriesOfAllKeys(db, caller.organization.id, input),
});

export const correctMemoryOperation = defineOperation({
  kind: 'person_action',
  name: 'agents.correct_memory',
  family: 'agents',
  summary: "Correct an agent's memory",
  description: 'Rewrites what a key remembers; recorded in the audit trail with who, why, and the note before and after.',
  method: 'PATCH',
  path: '/agents/memories/:id',
  input: correctMemoryInput,
  output: memorySchema,
  access: { person: { roles: rolesThat.seeMemories } },
  interfaces: consoleOnly,
  handler: (input, { db, caller }) => correctMemory(db, caller.organization.id, input, userOf(caller.actor)),
});

export const forgetMemoryOperation = defineOperation({
  kind: 'person_action',
  name: 'agents.forget_memory',
  family: 'agents',
  summary: "Forget an agent's memory",
  description: 'Deletes what a key remembers; recorded in the audit trail with who, why, and what the note said.',
  method: 'POST',
  path: '/agents/memories/:id/forget',
  input: forgetMemoryInput,
  output: z.object({ id: z.string(), forgotten: z.literal(true) }),
  access: { person: { roles: rolesThat.seeMemories } },
  interfaces: consoleOnly,
  handler: (input, { db, caller }) => forgetMemoryForKey(db, caller.organization.id, input, userOf(caller.actor)),
});

export const waitingTasksOperation = defineOperation({
  kind: 'read',
  name: 'agents.waiting_tasks',
  family: 'agents',
  summary: 'MCP tasks waiting on a review',
  description: "Agents' MCP tasks whose write a person has not decided yet, with the review each waits on.",
  method: 'GET',
  path: '/agents/waiting-tasks',
  list: false,
  input: z.strictObject({}),
  output: z.array(
    z.object({
      task_id: z.string(),
      api_key_id: z.string(),
      api_key_label: z.string(),
      tool: z.string(),
      review_id: z.string(),
      reason: z.string(),
      created_at: z.string(),
      expires_at: z.string(),
    }),
  ),
  access: everyone,
  interfaces: consoleOnly,
  handler: (_input, { db, caller }) => listTasksWaitingOnReview(db, caller.organization.id),
});

export const agentOperations = [
  listAgentsOperation,
  listAgentCallsOperation,
  agentActivityOperation,
  listAgentMemoriesOperation,
  correctMemoryOperation,
  forgetMemoryOperation,
  waitingTasksOperation,
];
