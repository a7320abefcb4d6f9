import type { Database } from '../../db/database';
import { sealAuditChain } from '../../domain/audit/ledger';
import { chainLink, contentDigest, type ChainedContent } from '../../domain/audit/chain';
import { dayMs, type FixtureIds, type SizeOrganization } from './fixtures';

// An organization's audit trail after a year of use, as the ledger holds it: `count` events over the past year,
// each with its content digest and its place in the organization's chain, made by the ledger's own functions
// (domain/audit/chain.ts) in this process and inserted in bulk. The organization's own events (its keys, people
// and policy, made when it was) come after them, chained by the sealer.

/** The operations of the trail's gated writes, in turn. */
export const trailOperations = ['tasks.create', 'tasks.update', 'expenses.create', 'invoices.update', 'customers.update', 'bookings.create', 'work_logs.create'];

/** Events inserted per statement. */
const insertBatch = 5000;

/**
 * Event `index` (from 1) of the trail. In every 40: twenty decisions of gated writes (a Deny among them, a Review
 * every tenth), sixteen applied writes, and four a person's: approvals and denials of the held writes, a
 * sign-in, a failed write. Keys take turns; the people who decide too.
 */
export function trailEvent(organization: SizeOrganization, ids: FixtureIds, index: number): ChainedContent {
  const sfx = ids.suffix(index);
  const slot = index % 40;
  const key = organization.keyIds[index % organization.keyIds.length]!;
  const person = organization.userIds[(index >> 3) % organization.userIds.length]!;
  const operation = trailOperations[(index >> 2) % trailOperations.length]!;
  const base = { id: `evt_${sfx}`, org_id: organization.orgId, workflow_id: `size-${sfx}`, review_id: null, resource_type: null, resource_id: null };
  if (slot < 20) {
    const decision = slot === 13 ? 'deny' : slot % 10 === 9 ? 'review' : 'allow';
    return {
      ...base,
      type: 'gate.decided',
      actor_type: 'api_key',
      actor_id: key,
      data: { operation, decision, reason: decision === 'allow' ? 'Ordinary work' : `The title asks for ${decision}`, policyIds: [`${decision}-by-title`], interface: 'rest' },
    };
  }
  if (slot < 36) return { ...base, type: 'write.applied', actor_type: 'api_key', actor_id: key, resource_type: 'tasks', resource_id: `task_${sfx}`, data: { operation } };
  if (slot === 36 || slot === 37) {
    const type = slot === 36 ? 'review.approved' : 'review.denied';
    return { ...base, type, actor_type: 'user', actor_id: person, review_id: `rev_${sfx}`, data: { comment: slot === 36 ? null : 'Not this one', via: 'console', payload_digest: `sha256:${sfx}`, passkey: null } };
  }
  if (slot === 38) return { ...base, workflow_id: null, type: 'person.signed_in', actor_type: 'user', actor_id: person, resource_id: person, data: { session: `ses_${sfx}` } };
  return { ...base, type: 'write.failed', actor_type: 'api_key', actor_id: key, data: { code: 'conflict', message: 'The record changed since the write was decided' } };
}

export interface AuditSeed {
  /** Seeded events, and events in the organization's chain once sealed (its own ones included). */
  events: number;
  chained: number;
  seconds: number;
  vacuumAnalyzeSeconds: number;
}

export async function seedAuditTrail(db: Database, organization: SizeOrganization, ids: FixtureIds, count: number): Promise<AuditSeed> {
  const started = performance.now();
  const firstMs = Date.now() - 366 * dayMs;
  const stepMs = (365 * dayMs) / count;
  let chain: Buffer | null = null;
  let lastId = '';
  for (let first = 1; first <= count; first += insertBatch) {
    const columns = { id: [] as string[], type: [] as string[], actor_type: [] as string[], actor_id: [] as (string | null)[], workflow_id: [] as (string | null)[],
      review_id: [] as (string | null)[], resource_type: [] as (string | null)[], resource_id: [] as (string | null)[], data: [] as string[], at: [] as number[],
      digest: [] as Buffer[], seq: [] as number[], chain: [] as Buffer[] };
    for (let index = first; index < Math.min(first + insertBatch, count + 1); index++) {
      const event = trailEvent(organization, ids, index);
      const digest = contentDigest(event);
      chain = chainLink(chain, index, digest);
      columns.id.push(event.id);
      columns.type.push(event.type);
      columns.actor_type.push(event.actor_type);
      columns.actor_id.push(event.actor_id);
      columns.workflow_id.push(event.workflow_id);
      columns.review_id.push(event.review_id);
      columns.resource_type.push(event.resource_type);
      columns.resource_id.push(event.resource_id);
      columns.data.push(JSON.stringify(event.data));
      columns.at.push((firstMs + index * stepMs) / 1000);
      columns.digest.push(digest);
      columns.seq.push(index);
      columns.chain.push(chain);
      lastId = event.id;
    }
    await db.query(
      `INSERT INTO audit_events (id, org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data, created_at, digest, seq, chain)
       SELECT id, $1, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data::jsonb, to_timestamp(at), digest, seq, chain
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::float8[], $12::bytea[], $13::bigint[], $14::bytea[])
         AS e(id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data, at, digest, seq, chain)`,
      [organization.orgId, columns.id, columns.type, columns.actor_type, columns.actor_id, columns.workflow_id, columns.review_id, columns.resource_type,
        columns.resource_id, columns.data, columns.at, columns.digest, columns.seq, columns.chain],
    );
  }
  // The head where the seeded chain ends; the sealer chains the organization's own events after it, as the worker would.
  await db.query(
    `INSERT INTO audit_chain_heads (org_id, seq, chain, last_event_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id) DO UPDATE SET seq = $2, chain = $3, last_event_id = $4, sealed_at = now()`,
    [organization.orgId, count, chain, lastId],
  );
  const sealed = await sealAuditChain(db, organization.orgId, { lagMs: 0 });
  if (sealed.refused.length > 0) throw new Error(`the sealer refused ${sealed.refused.length} of the organization's own events`);
  const seeded = performance.now();
  await db.query('VACUUM ANALYZE audit_events');
  return { events: count, chained: count + sealed.sealed, seconds: (seeded - started) / 1000, vacuumAnalyzeSeconds: (performance.now() - seeded) / 1000 };
}
