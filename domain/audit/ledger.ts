import type { QueryResultRow } from 'pg';
import type { Database, Queryable } from '../../db/database';
import { chainLink, contentDigest, type ChainedContent } from './chain';

/**
 * Sealing and verifying the audit ledger (audit-chain.ts for the hashes). Events are written with their content
 * digest; the sealer chains them later, in id order, so that writing an event costs no lock on the chain.
 */

/** Events younger than this wait for the next sealing: a transaction that began earlier may still commit one. */
export const sealingLagMs = 30_000;

/** Events chained per transaction. */
const sealingBatch = 1000;

const contentColumns = 'id, org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data';

const contentOf = (row: QueryResultRow): ChainedContent => ({
  id: row.id,
  org_id: row.org_id,
  type: row.type,
  actor_type: row.actor_type,
  actor_id: row.actor_id,
  workflow_id: row.workflow_id,
  review_id: row.review_id,
  resource_type: row.resource_type,
  resource_id: row.resource_id,
  data: row.data,
});

export interface Sealed {
  sealed: number;
  /** Events left out of the chain: no digest, or one that does not match (written or changed behind the service). */
  refused: string[];
}

/**
 * The instant before which events are old enough to chain: `lag` milliseconds before `now`, or before the database's
 * own clock when no `now` is given (the events' times are the database's, to the microsecond; a caller's clock, to
 * the millisecond, could cut off an event written in the same millisecond).
 */
const cutOff = (lag: string, now: string) => `(coalesce(${now}::timestamptz, clock_timestamp()) - ${lag}::float8 * interval '1 millisecond')`;

/**
 * Chains the organization's unsealed events older than `lagMs`, in id order, after its chain's head (one sealer
 * at a time per organization: the head's row is locked). An event whose digest is missing or wrong is not
 * chained; `verifyAuditChain` names it.
 */
export async function sealAuditChain(db: Database, orgId: string, { lagMs = sealingLagMs, now, batch = sealingBatch }: { lagMs?: number; now?: Date; batch?: number } = {}): Promise<Sealed> {
  return db.transaction(async (tx) => {
    await tx.query(`INSERT INTO audit_chain_heads (org_id, seq, chain, last_event_id) VALUES ($1, 0, $2, '') ON CONFLICT (org_id) DO NOTHING`, [orgId, Buffer.alloc(32)]);
    const head = (await tx.query('SELECT seq, chain, last_event_id FROM audit_chain_heads WHERE org_id = $1 FOR UPDATE', [orgId])).rows[0]!;
    const { rows } = await tx.query(
      `SELECT ${contentColumns}, digest FROM audit_events
       WHERE org_id = $1 AND seq IS NULL AND id > $2 AND created_at < ${cutOff('$3', '$5')}
       ORDER BY id LIMIT $4`,
      [orgId, head.last_event_id, lagMs, batch, now ?? null],
    );
    let seq = Number(head.seq);
    let chain: Buffer = head.chain;
    let lastId: string = head.last_event_id;
    const refused: string[] = [];
    const ids: string[] = [];
    const seqs: number[] = [];
    const chains: Buffer[] = [];
    for (const row of rows) {
      lastId = row.id;
      const digest = contentDigest(contentOf(row));
      if (!row.digest || !digest.equals(row.digest)) {
        refused.push(row.id);
        continue;
      }
      seq += 1;
      chain = chainLink(chain, seq, digest);
      ids.push(row.id);
      seqs.push(seq);
      chains.push(chain);
    }
    if (ids.length > 0) {
      await tx.query(
        `UPDATE audit_events e SET seq = s.seq, chain = s.chain
         FROM unnest($1::text[], $2::bigint[], $3::bytea[]) AS s(id, seq, chain)
         WHERE e.org_id = $4 AND e.id = s.id`,
        [ids, seqs, chains, orgId],
      );
    }
    if (rows.length > 0) {
      await tx.query('UPDATE audit_chain_heads SET seq = $2, chain = $3, last_event_id = $4, sealed_at = now() WHERE org_id = $1', [orgId, seq, chain, lastId]);
    }
    return { sealed: ids.length, refused };
  });
}

/** Seals every organization that has events waiting. */
export async function sealAllAuditChains(db: Database, options: { lagMs?: number; now?: Date } = {}): Promise<Sealed> {
  const { rows } = await db.query<{ org_id: string }>('SELECT DISTINCT org_id FROM audit_events WHERE seq IS NULL');
  const total: Sealed = { sealed: 0, refused: [] };
  for (const { org_id } of rows) {
    for (;;) {
      const sealed = await sealAuditChain(db, org_id, options);
      total.sealed += sealed.sealed;
      total.refused.push(...sealed.refused);
      // A batch not full: nothing more is waiting for this organization.
      if (sealed.sealed + sealed.refused.length < sealingBatch) break;
    }
  }
  return total;
}

export interface ChainProblem {
  /** changed: its content no longer matches its digest; removed: a place in the chain is empty; broken: a hash
   * was rewritten; inserted: an event the sealer refused or found behind the head (written without the service, or
   * changed before it was sealed); head: the head does not end the chain. */
  kind: 'changed' | 'removed' | 'broken' | 'inserted' | 'head';
  /** The event (missing for a removed one). */
  id?: string;
  seq?: number;
  message: string;
}

export interface ChainReport {
  sealed: number;
  unsealed: number;
  /** Events written before the ledger began (before the migration that brought it): outside the chain. */
  beforeLedger: number;
  head: { seq: number; chain: string } | null;
  problems: ChainProblem[];
}

/** Walks the organization's chain from the start and names every event that was changed, removed or inserted. */
export async function verifyAuditChain(db: Queryable, orgId: string, { lagMs = sealingLagMs, now }: { lagMs?: number; now?: Date } = {}): Promise<ChainReport> {
  const problems: ChainProblem[] = [];
  const head = (await db.query('SELECT seq, chain, last_event_id, started_after FROM audit_chain_heads WHERE org_id = $1', [orgId])).rows[0];
  let expectedSeq = 0;
  let chain: Buffer | null = null;
  let sealed = 0;
  let after = -1;
  for (;;) {
    const { rows } = await db.query(
      `SELECT ${contentColumns}, digest, seq, chain FROM audit_events WHERE org_id = $1 AND seq > $2 ORDER BY seq LIMIT 1000`,
      [orgId, after],
    );
    for (const row of rows) {
      const seq = Number(row.seq);
      sealed += 1;
      if (seq !== expectedSeq + 1) {
        problems.push({ kind: 'removed', seq: expectedSeq + 1, message: `events ${expectedSeq + 1}${seq - 1 > expectedSeq + 1 ? `–${seq - 1}` : ''} of the chain are gone` });
        // Carry on from the stored hash, so one removal is reported once.
        chain = null;
      }
      const digest = contentDigest(contentOf(row));
      if (!row.digest || !digest.equals(row.digest)) problems.push({ kind: 'changed', id: row.id, seq, message: `event ${row.id} (${row.type}) was changed after it was written` });
      if (chain !== null || seq === 1) {
        const link = chainLink(chain, seq, row.digest ?? digest);
        if (!row.chain || !link.equals(row.chain)) problems.push({ kind: 'broken', id: row.id, seq, message: `the chain's hash at event ${row.id} was rewritten` });
      }
      chain = row.chain;
      expectedSeq = seq;
      after = seq;
    }
    if (rows.length < 1000) break;
  }
  if (head && (Number(head.seq) !== expectedSeq || (expectedSeq > 0 && !(head.chain as Buffer).equals(chain ?? Buffer.alloc(0))))) {
    if (Number(head.seq) > expectedSeq) problems.push({ kind: 'removed', seq: expectedSeq + 1, message: `the chain ends at event ${expectedSeq}, its head says ${String(head.seq)}: the last events are gone` });
    else problems.push({ kind: 'head', message: `the chain's head (event ${String(head.seq)}) does not end the chain (event ${expectedSeq})` });
  }
  // Events the sealer refused or cannot reach: older than the lag, yet unsealed (those from before the ledger began
  // aside: they were written without a digest).
  const startedAfter: string = head?.started_after ?? '';
  const { rows: unsealed } = await db.query(
    `SELECT id, type FROM audit_events WHERE org_id = $1 AND seq IS NULL AND id > $4 AND (created_at < ${cutOff('$2', '$5')} OR id <= $3) ORDER BY id`,
    [orgId, lagMs, head?.last_event_id ?? '', startedAfter, now ?? null],
  );
  for (const row of unsealed) {
    problems.push({ kind: 'inserted', id: row.id, message: `event ${row.id} (${row.type}) is not in the chain: written without the service, out of order, or changed before it was sealed` });
  }
  const { rows: counts } = await db.query<{ waiting: number; before: number }>(
    'SELECT count(*) FILTER (WHERE id > $2)::int AS waiting, count(*) FILTER (WHERE id <= $2)::int AS before FROM audit_events WHERE org_id = $1 AND seq IS NULL',
    [orgId, startedAfter],
  );
  return {
    sealed,
    unsealed: counts[0]!.waiting,
    beforeLedger: counts[0]!.before,
    head: head && Number(head.seq) > 0 ? { seq: Number(head.seq), chain: (head.chain as Buffer).toString('hex') } : null,
    problems,
  };
}
