import type { Database } from '../../db/database';

/**
 * Sends each organization's audit ledger head (its last sealed event, place and hash) to the endpoints that ask
 * for `audit.head`, as an outside witness: a copy of the head held elsewhere shows a later rewrite of the chain.
 * The schedule runs it daily; the event's id is made of the organization and the day, so that a second run that day
 * sends nothing new. Answers how many organizations' heads went out.
 */
export async function emitAuditHeads(db: Database, now = new Date()): Promise<number> {
  const { rowCount } = await db.query(
    `INSERT INTO webhook_events (id, org_id, type, data, created_at)
     SELECT 'evt_' || lower(substr(md5(h.org_id || $1::text), 1, 26)), h.org_id, 'audit.head',
            jsonb_build_object('seq', h.seq, 'chain', encode(h.chain, 'hex'), 'last_event_id', h.last_event_id,
                               'sealed_at', to_char(h.sealed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
            $2
     FROM audit_chain_heads h
     WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.org_id = h.org_id AND e.enabled AND 'audit.head' = ANY (e.event_types))
     ON CONFLICT (id) DO NOTHING`,
    [now.toISOString().slice(0, 10), now],
  );
  return rowCount ?? 0;
}
