import { createHash } from 'node:crypto';

/**
 * The audit ledger's hashes. Each event gets a digest of its content when it is written (by the service, in the
 * transaction that makes the change); a sealer then chains the events of an organization in order:
 * `chain(n) = SHA-256(chain(n-1) ‖ seq ‖ digest(n))`. Anyone holding the rows (or an export of them) recomputes
 * both and finds a row changed, removed, or inserted without the service.
 *
 * Personal data is chained by its digest, not its value: in the canonical content, the values of `email`, `name`
 * and `comment` are replaced by `sha256:<hex>` of the value, and an erased value is stored as
 * `{"erased": "sha256:<hex>"}`, which stands for the same digest. Erasing a person's data keeps the chain whole.
 */

/** The fields of an event the digest covers (its time is the database's and is not). */
export interface ChainedContent {
  id: string;
  org_id: string;
  type: string;
  actor_type: string;
  actor_id: string | null;
  workflow_id: string | null;
  review_id: string | null;
  resource_type: string | null;
  resource_id: string | null;
  data: unknown;
}

const personalFields = new Set(['email', 'name', 'comment']);

const sha256 = (...parts: (string | Buffer)[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** A value as the digest sees it: objects with sorted keys, personal values by their digests. */
function canonical(value: unknown, key?: string): unknown {
  if (key !== undefined && personalFields.has(key)) {
    if (typeof value === 'string') return `sha256:${sha256(value).toString('hex')}`;
    if (value && typeof value === 'object' && typeof (value as { erased?: unknown }).erased === 'string') return (value as { erased: string }).erased;
  }
  if (Array.isArray(value)) return value.map((item) => canonical(item));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((name) => [name, canonical((value as Record<string, unknown>)[name], name)]),
    );
  }
  return value;
}

/** The canonical JSON of an event's content: what its digest is taken over. */
export function canonicalContent(content: ChainedContent): string {
  const { id, org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data } = content;
  return JSON.stringify(canonical({ id, org_id, type, actor_type, actor_id, workflow_id, review_id, resource_type, resource_id, data }));
}

export function contentDigest(content: ChainedContent): Buffer {
  return sha256(canonicalContent(content));
}

/** The chain's link for the event at `seq` (from 1), after `previous` (the genesis has 32 zero bytes). */
export function chainLink(previous: Buffer | null, seq: number, digest: Buffer): Buffer {
  return sha256(previous ?? Buffer.alloc(32), String(seq), digest);
}

/** A personal value erased in place: what the data keeps so that the digest, and the chain, still verify. */
export function erasedValue(value: string): { erased: string } {
  return { erased: `sha256:${sha256(value).toString('hex')}` };
}
