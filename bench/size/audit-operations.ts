import { performance } from 'node:perf_hooks';
import { writeJsonlExport } from '../../cli/commands/audit';
import type { Queryable } from '../../db/database';
import { verifyAuditChain } from '../../domain/audit/ledger';
import type { Operation } from '../measure';
import type { SizeOrganization } from './fixtures';
import { cursorAt, expectedPage, pageRequest, query, sizePageSize } from './probes';

/** The audit trail's timed requests: `first` (the trail as the console opens it) is the main figure. */
export const auditOperationNames = ['first', 'deep', 'type', 'apiKey', 'user', 'operation', 'decision'] as const;
export type AuditOperationName = (typeof auditOperationNames)[number];

const eventsOf = (condition: string) => `SELECT e.id FROM audit_events e WHERE e.org_id = $1 AND ${condition}`;

/** Every request of the trail for one organization, each with the answer it must give (worked out here). */
export async function auditOperations(db: Queryable, organization: SizeOrganization, apiUrl: string, events: number): Promise<Record<AuditOperationName, Operation>> {
  const headers = { authorization: `Bearer ${organization.reviewerToken}` };
  const key = organization.keyIds[1]!;
  const person = organization.userIds[2]!;
  const page = async (name: string, filter: Record<string, string>, condition: string, params: unknown[], check: (item: any) => string | undefined, depth?: number) => {
    const sql = eventsOf(condition);
    const deep = depth === undefined ? undefined : await cursorAt(db, sql, [organization.orgId, ...params], depth);
    const expected = await expectedPage(db, sql, [organization.orgId, ...params], deep?.after);
    return pageRequest(`${apiUrl}/api/v1/audit-events?${query({ ...filter, limit: sizePageSize, cursor: deep?.cursor })}`, headers, `audit ${name}`, expected, check);
  };
  const any = () => undefined;
  return {
    first: await page('first page', {}, 'true', [], any),
    deep: await page('half way down', {}, 'true', [], any, Math.floor(events / 2)),
    type: await page('of one type', { type: 'review.denied' }, 'e.type = $2', ['review.denied'], (item) => (item.type === 'review.denied' ? undefined : `type ${item.type}`)),
    apiKey: await page('of one key', { api_key_id: key }, `((e.actor_type = 'api_key' AND e.actor_id = $2) OR e.resource_id = $2)`, [key], (item) =>
      item.actor.id === key || item.resource_id === key ? undefined : `actor ${item.actor.id}, resource ${item.resource_id}`,
    ),
    user: await page('of one person', { user_id: person }, `((e.actor_type = 'user' AND e.actor_id = $2) OR e.resource_id = $2)`, [person], (item) =>
      item.actor.id === person || item.resource_id === person ? undefined : `actor ${item.actor.id}, resource ${item.resource_id}`,
    ),
    operation: await page('of one operation', { operation: 'expenses.create' }, `e.data->>'operation' = $2`, ['expenses.create'], (item) =>
      item.operation === 'expenses.create' ? undefined : `operation ${item.operation}`,
    ),
    decision: await page('of one decision', { decision: 'deny' }, `e.type = 'gate.decided' AND e.data->>'decision' = $2`, ['deny'], (item) =>
      item.decision === 'deny' ? undefined : `decision ${item.decision}`,
    ),
  };
}

/** One pass over the whole trail: how long it took, and how many events it went through. */
export interface Pass {
  seconds: number;
  events: number;
}

/**
 * The export `gatehouse audit export --org … ` writes (jsonl, the CLI's own code), into a counter instead of
 * stdout: checked to hold every event of the organization, then the ledger's head at the last one.
 */
export async function exportPass(db: Queryable, organization: SizeOrganization, chained: number): Promise<Pass> {
  let lines = 0;
  let last = '';
  const started = performance.now();
  await writeJsonlExport(db, organization.orgId, {}, async (line) => {
    lines++;
    last = line;
  });
  const seconds = (performance.now() - started) / 1000;
  const head = JSON.parse(last) as { ledger_head?: { seq: number } };
  if (lines !== chained + 1 || head.ledger_head?.seq !== chained) {
    throw new Error(`the export of ${organization.slug} has ${lines} lines ending ${last.slice(0, 200)}; expected ${chained} events and the head at ${chained}`);
  }
  return { seconds, events: chained };
}

/** `gatehouse audit verify --org …`'s walk of the ledger (verifyAuditChain), checked to find the whole chain and nothing wrong. */
export async function verifyPass(db: Queryable, organization: SizeOrganization, chained: number): Promise<Pass> {
  const started = performance.now();
  const report = await verifyAuditChain(db, organization.orgId);
  const seconds = (performance.now() - started) / 1000;
  if (report.problems.length > 0 || report.sealed !== chained || report.head?.seq !== chained) {
    throw new Error(`the ledger of ${organization.slug} does not verify: ${report.sealed} sealed of ${chained}, head ${report.head?.seq}, ${report.problems.length} problems: ${report.problems[0]?.message ?? ''}`);
  }
  return { seconds, events: chained };
}
