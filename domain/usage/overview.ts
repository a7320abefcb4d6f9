import type { Queryable } from '../../db/database';
import type { Role } from '../identity/actors';
import { rolesThat } from '../identity/actors';
import { stillPendingSql } from '../gate/reviews/state';
import { labelVerifiedSql } from '../kit/agent-names';
import { keyBudgetsToday } from './key-budgets';

// The console's overview: the queue, the organization's day, the last week's decisions, the busiest agents and
// what needs a person, for one organization, in a few aggregate queries that each use an index on the organization
// (reviews by status, the call log and the decisions by time).

/**
 * The decisions of a day: how many gated writes the policy allowed, held for a person and denied, and how many it
 * would have held but were refused because the review queue was full.
 */
export interface DecisionCounts {
  allow: number;
  review: number;
  deny: number;
  refused: number;
}

/** A held write as the overview names it. */
export interface WaitingReview {
  review_id: string;
  operation: string;
  api_key_id: string;
  api_key_label: string;
  /** false: a connected app's own name. */
  api_key_label_verified: boolean;
  held_at: string;
  expires_at: string;
}

/** Something a person has to do: each kind says where it is fixed. */
export type NeedsAPerson =
  | { kind: 'queue_full'; pending: number; cap: number }
  | { kind: 'organization_at_budget'; used: number; limit: number }
  | { kind: 'webhook_switched_off'; endpoint_id: string; url: string | null; reason: string; since: string }
  | { kind: 'key_at_budget'; api_key_id: string; label: string; label_verified: boolean; budget: 'requests' | 'writes'; operation: string | null; used: number; limit: number }
  | ({ kind: 'review_escalated' } & WaitingReview);

export interface Overview {
  /** The organization's local date and its time zone: "today" and the days below are its. */
  date: string;
  timezone: string;
  queue: {
    pending: number;
    /** The plan's cap of writes waiting at once: past it, writes that would be held are refused. */
    cap: number;
    oldest: WaitingReview | null;
    next_to_expire: WaitingReview | null;
    expiring_within_a_day: number;
    escalated: number;
  };
  today: { calls: number; writes: DecisionCounts };
  /** The last 7 local days, oldest first, today last; a day without decisions counts zeros. */
  decisions_by_day: ({ date: string } & DecisionCounts)[];
  /** The keys with the most calls today (at most 5), with how many of their writes were held and denied. */
  busiest_agents: { api_key_id: string; label: string; label_verified: boolean; calls: number; held: number; denied: number }[];
  needs_a_person: NeedsAPerson[];
}

export interface OverviewOptions {
  organization: { id: string; timezone: string };
  /** The organization's daily request budget (its plan's) and what it used of it today. */
  dailyBudget: { used: number; limit: number };
  /** The plan's cap of writes waiting for a person at once. */
  pendingReviewCap: number;
  /** The asker's role: an endpoint's URL is shown only to those who manage webhooks. */
  role: Role;
  /** Where "today" is taken from: the clock the request limits count by. */
  now: Date;
  /** The organization's webhook endpoints Gatehouse switched off after their deliveries kept failing (domain/notify). */
  endpointsSwitchedOff: { endpoint_id: string; url: string; reason: string; since: string }[];
}

/** How many of the busiest keys, and of the escalated reviews, the overview names. */
const busiestShown = 5;
const escalatedShown = 10;

/** The start of the organization's local day ($2 the instant, $3 the zone), as an instant. */
const startOfLocalDay = `(date_trunc('day', $2::timestamptz AT TIME ZONE $3::text) AT TIME ZONE $3::text)`;

/**
 * A waiting review is escalated once it was escalated to a next tier (workflows/notifications.ts marks it), or
 * once it has waited longer than the organization's escalation wait (before that workflow has marked it).
 */
const escalatedSql = `(r.escalated_at IS NOT NULL
  OR (o.review_escalation_ms IS NOT NULL AND r.created_at + o.review_escalation_ms * interval '1 millisecond' <= now()))`;

export async function organizationOverview(db: Queryable, options: OverviewOptions): Promise<Overview> {
  const { organization, now } = options;
  const [queue, waiting, days, agents, budgets] = await Promise.all([
    queueFigures(db, organization.id),
    waitingReviews(db, organization.id),
    decisionsByDay(db, organization, now),
    agentsToday(db, organization, now),
    keysAtBudget(db, organization, now),
  ]);
  const calls = agents.reduce((sum, agent) => sum + agent.calls, 0);
  const today = days[days.length - 1]!;
  const seesUrls = (rolesThat.manageWebhooks as readonly Role[]).includes(options.role);
  const { used, limit } = options.dailyBudget;
  return {
    date: today.date,
    timezone: organization.timezone,
    queue: { ...queue, cap: options.pendingReviewCap, oldest: waiting.oldest, next_to_expire: waiting.nextToExpire },
    today: { calls, writes: { allow: today.allow, review: today.review, deny: today.deny, refused: today.refused } },
    decisions_by_day: days,
    busiest_agents: agents.filter((agent) => agent.api_key_id !== null && agent.calls > 0).slice(0, busiestShown) as Overview['busiest_agents'],
    needs_a_person: [
      ...(queue.pending >= options.pendingReviewCap ? [{ kind: 'queue_full' as const, pending: queue.pending, cap: options.pendingReviewCap }] : []),
      ...(limit > 0 && used >= limit ? [{ kind: 'organization_at_budget' as const, used, limit }] : []),
      ...options.endpointsSwitchedOff.map((endpoint) => ({ kind: 'webhook_switched_off' as const, ...endpoint, url: seesUrls ? endpoint.url : null })),
      ...budgets,
      ...waiting.escalated.map((review) => ({ kind: 'review_escalated' as const, ...review })),
    ],
  };
}

async function queueFigures(db: Queryable, orgId: string) {
  const { rows } = await db.query(
    `SELECT count(*)::int AS pending,
            count(*) FILTER (WHERE r.expires_at <= now() + interval '1 day')::int AS expiring,
            count(*) FILTER (WHERE ${escalatedSql})::int AS escalated
     FROM reviews r JOIN organizations o ON o.id = r.org_id
     WHERE r.org_id = $1 AND ${stillPendingSql('r')}`,
    [orgId],
  );
  return { pending: rows[0].pending as number, expiring_within_a_day: rows[0].expiring as number, escalated: rows[0].escalated as number };
}

/** The oldest waiting review, the one that expires next, and the escalated ones (oldest first, a few). */
async function waitingReviews(db: Queryable, orgId: string) {
  // Each part picks its reviews from the queue first (an index on the status), then joins what names them.
  const pick = (part: number, order: string, limit: number, filter = '') => `
    SELECT ${part} AS part, r.id, d.operation, d.api_key_id, k.label, ${labelVerifiedSql('k')} AS label_verified, r.created_at, r.expires_at
    FROM (SELECT r.id, r.decision_id, r.created_at, r.expires_at FROM reviews r JOIN organizations o ON o.id = r.org_id
          WHERE r.org_id = $1 AND ${stillPendingSql('r')} ${filter} ORDER BY ${order} LIMIT ${limit}) r
    JOIN gate_decisions d ON d.id = r.decision_id JOIN api_keys k ON k.id = d.api_key_id`;
  const { rows } = await db.query(
    `${pick(1, 'r.id', 1)} UNION ALL ${pick(2, 'r.expires_at, r.id', 1)} UNION ALL ${pick(3, 'r.id', escalatedShown, `AND ${escalatedSql}`)}
     ORDER BY part, id`,
    [orgId],
  );
  const reviewsOf = (part: number) =>
    rows
      .filter((row) => row.part === part)
      .map(
        (row): WaitingReview => ({
          review_id: row.id,
          operation: row.operation,
          api_key_id: row.api_key_id,
          api_key_label: row.label,
          api_key_label_verified: row.label_verified,
          held_at: (row.created_at as Date).toISOString(),
          expires_at: (row.expires_at as Date).toISOString(),
        }),
      );
  return { oldest: reviewsOf(1)[0] ?? null, nextToExpire: reviewsOf(2)[0] ?? null, escalated: reviewsOf(3) };
}

/** Decisions by local day over the last 7 days, zeros for the days without any. */
async function decisionsByDay(db: Queryable, organization: { id: string; timezone: string }, now: Date) {
  const { rows } = await db.query(
    `WITH days AS (
       SELECT day::date AS day
       FROM generate_series(date_trunc('day', $2::timestamptz AT TIME ZONE $3::text) - interval '6 days', date_trunc('day', $2::timestamptz AT TIME ZONE $3::text), interval '1 day') AS day
     ), decided AS (
       SELECT (g.created_at AT TIME ZONE $3::text)::date AS day,
              count(*) FILTER (WHERE g.decision = 'allow')::int AS allow,
              count(*) FILTER (WHERE g.decision = 'review')::int AS review,
              count(*) FILTER (WHERE g.decision = 'deny')::int AS deny,
              count(*) FILTER (WHERE g.decision = 'refused')::int AS refused
       FROM gate_decisions g
       WHERE g.org_id = $1 AND g.created_at >= ((SELECT min(day) FROM days)::timestamp AT TIME ZONE $3::text)
         AND g.created_at < ((SELECT max(day) FROM days) + 1)::timestamp AT TIME ZONE $3::text
       GROUP BY 1
     )
     SELECT to_char(days.day, 'YYYY-MM-DD') AS date, COALESCE(decided.allow, 0) AS allow, COALESCE(decided.review, 0) AS review, COALESCE(decided.deny, 0) AS deny,
            COALESCE(decided.refused, 0) AS refused
     FROM days LEFT JOIN decided USING (day)
     ORDER BY days.day`,
    [organization.id, now, organization.timezone],
  );
  return rows.map((row) => ({ date: row.date as string, allow: row.allow as number, review: row.review as number, deny: row.deny as number, refused: row.refused as number }));
}

/** Today's REST and MCP calls by key (a person's token calls as no key), the busiest first. */
async function agentsToday(db: Queryable, organization: { id: string; timezone: string }, now: Date) {
  const { rows } = await db.query(
    `SELECT c.api_key_id, k.label, ${labelVerifiedSql('k')} AS label_verified, count(*)::int AS calls,
            count(*) FILTER (WHERE c.outcome = 'pending_review')::int AS held,
            count(*) FILTER (WHERE c.outcome = 'policy_denied')::int AS denied
     FROM call_log c LEFT JOIN api_keys k ON k.id = c.api_key_id AND k.org_id = c.org_id
     WHERE c.org_id = $1 AND c.interface IN ('rest', 'mcp') AND c.created_at >= ${startOfLocalDay}
     GROUP BY c.api_key_id, k.label, k.oauth_client_id
     ORDER BY count(*) DESC, k.label`,
    [organization.id, now, organization.timezone],
  );
  return rows.map((row) => ({
    api_key_id: row.api_key_id as string | null,
    label: row.label as string,
    label_verified: row.label_verified !== false,
    calls: row.calls as number,
    held: row.held as number,
    denied: row.denied as number,
  }));
}

/** The usable keys that used up one of their own budgets today: their requests, or their writes of an operation. */
async function keysAtBudget(db: Queryable, organization: { id: string; timezone: string }, now: Date): Promise<NeedsAPerson[]> {
  const budgets = await keyBudgetsToday(db, organization, now);
  const spent = [...budgets].filter(([, use]) => (use.requests && use.requests.used >= use.requests.budget) || use.writes.some((cap) => cap.used >= cap.cap));
  if (!spent.length) return [];
  const { rows } = await db.query(
    `SELECT k.id, k.label, ${labelVerifiedSql('k')} AS label_verified FROM api_keys k
     WHERE k.org_id = $1 AND k.id = ANY($2::text[]) AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
     ORDER BY k.label, k.id`,
    [organization.id, spent.map(([id]) => id)],
  );
  return rows.flatMap((row) => {
    const use = budgets.get(row.id)!;
    const key = { kind: 'key_at_budget' as const, api_key_id: row.id as string, label: row.label as string, label_verified: row.label_verified as boolean };
    return [
      ...(use.requests && use.requests.used >= use.requests.budget
        ? [{ ...key, budget: 'requests' as const, operation: null, used: use.requests.used, limit: use.requests.budget }]
        : []),
      ...use.writes.filter((cap) => cap.used >= cap.cap).map((cap) => ({ ...key, budget: 'writes' as const, operation: cap.operation, used: cap.used, limit: cap.cap })),
    ];
  });
}
