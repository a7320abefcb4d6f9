import { z } from 'zod';
import { roles, type PersonActor } from '../../domain/identity/actors';
import { endpointsSwitchedOffAfterFailures } from '../../domain/notify/deliveries';
import { organizationOverview } from '../../domain/usage/overview';
import { defineOperation } from './operation';

// The console's overview: what waits, what agents did today and this week, and what needs a person.

const count = z.number().int().min(0);

const decisionCounts = {
  allow: count.describe('Gated writes the policy allowed'),
  review: count.describe('Gated writes held for a person'),
  deny: count.describe('Gated writes the policy denied'),
  refused: count.describe('Gated writes the policy would have held, refused because the review queue was full'),
};

const waitingReview = {
  review_id: z.string(),
  operation: z.string(),
  api_key_id: z.string(),
  api_key_label: z.string(),
  api_key_label_verified: z.boolean().describe("false: a connected app's own name, which nobody verified"),
  held_at: z.string(),
  expires_at: z.string(),
};

const needsAPerson = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('queue_full'), pending: count, cap: count.describe("The plan's cap of writes waiting at once") }),
  z.object({
    kind: z.literal('organization_at_budget'),
    used: count.describe("Requests counted today against the organization's daily budget, refused ones included"),
    limit: count.describe("The plan's daily budget"),
  }),
  z.object({
    kind: z.literal('webhook_switched_off'),
    endpoint_id: z.string(),
    url: z.string().nullable().describe('null: shown only to people who manage webhooks'),
    reason: z.string(),
    since: z.string(),
  }),
  z.object({
    kind: z.literal('key_at_budget'),
    api_key_id: z.string(),
    label: z.string(),
    label_verified: z.boolean().describe("false: a connected app's own name, which nobody verified"),
    budget: z.enum(['requests', 'writes']).describe("Which of the key's own daily budgets it used up: its requests, or its writes of one operation"),
    operation: z.string().nullable().describe('The capped operation (writes); null for requests'),
    used: count.describe('Counted today, refused ones included'),
    limit: count,
  }),
  z.object({ kind: z.literal('review_escalated'), ...waitingReview }),
]);

export const getOverviewOperation = defineOperation({
  kind: 'read',
  name: 'overview.get',
  family: 'overview',
  summary: "The organization's overview",
  description:
    "The review queue now (pending, the oldest and the next to expire, expiring within a day, escalated); today in the organization's time zone (REST and MCP calls, gated writes by decision); decisions by day over the last 7 days; the 5 keys with the most calls today; and what needs a person (the review queue full, an endpoint Gatehouse switched off, a key at its own budget, the organization at its daily budget, a review past its escalation).",
  method: 'GET',
  path: '/overview',
  list: false,
  input: z.strictObject({}),
  output: z.object({
    date: z.string().describe("The organization's local date, YYYY-MM-DD"),
    timezone: z.string(),
    queue: z.object({
      pending: count,
      cap: count.describe("The plan's cap of writes waiting at once: past it, writes that would be held are refused"),
      oldest: z.object(waitingReview).nullable(),
      next_to_expire: z.object(waitingReview).nullable(),
      expiring_within_a_day: count,
      escalated: count.describe("Waiting past the organization's escalation wait"),
    }),
    today: z.object({
      calls: count.describe('REST and MCP calls today (the console\'s are not counted)'),
      writes: z.object(decisionCounts),
    }),
    decisions_by_day: z.array(z.object({ date: z.string(), ...decisionCounts })).describe('The last 7 days, oldest first, today last'),
    busiest_agents: z.array(
      z.object({ api_key_id: z.string(), label: z.string(), label_verified: z.boolean().describe("false: a connected app's own name, which nobody verified"), calls: count, held: count.describe('Writes held today'), denied: count.describe('Writes denied today') }),
    ),
    needs_a_person: z.array(needsAPerson),
  }),
  access: { person: { roles } },
  interfaces: ['console'],
  handler: async (_input, { db, caller, limits }) => {
    const [usage, endpointsSwitchedOff] = await Promise.all([limits.dailyUsage(caller), endpointsSwitchedOffAfterFailures(db, caller.organization.id)]);
    return organizationOverview(db, {
      endpointsSwitchedOff,
      organization: caller.organization,
      dailyBudget: { used: usage.used, limit: usage.limit },
      pendingReviewCap: caller.plan.pendingReviewCap,
      role: (caller.actor as PersonActor).role,
      now: limits.clock(),
    });
  },
});
