import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../db/database';
import { settleAndCount } from './ledger';
import type { Stack } from './stack';
import { WriteLoad, type WriteRecord } from './writers';

/** Sends `count` writes the policy holds for review (titles `review-<prefix>-<n>`), all at once. */
export async function holdWrites(stack: Pick<Stack, 'apiUrl' | 'org'>, prefix: string, count: number, signal: AbortSignal): Promise<WriteRecord[]> {
  const sender = new WriteLoad({ apiUrl: stack.apiUrl, tokens: [], prefix, maxWritesPerWriter: 0, signal });
  const token = stack.org.agentTokens[0]!;
  return Promise.all(Array.from({ length: count }, (_, n) => sender.send(token, `review-${prefix}-${n}`)));
}

export interface Decision {
  status: number;
  body: any;
  ms: number;
}

/** A person approves or denies a review through the API, with one of the organization's two reviewers' tokens. */
export async function decide(stack: Pick<Stack, 'apiUrl' | 'org'>, reviewId: string, verdict: 'approve' | 'deny', reviewer: 0 | 1 = 0): Promise<Decision> {
  const started = Date.now();
  try {
    const response = await fetch(`${stack.apiUrl}/v1/reviews/${reviewId}/${verdict}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.org.reviewerTokens[reviewer]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ comment: `chaos: ${verdict}` }),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: response.status, body: await response.json().catch(() => undefined), ms: Date.now() - started };
  } catch (error) {
    return { status: 0, body: { error: { message: (error as Error).message } }, ms: Date.now() - started };
  }
}

export interface ReviewRow {
  id: string;
  status: string;
  applied: boolean;
  failure: unknown;
}

export async function readReviews(db: Queryable, ids: string[]): Promise<Map<string, ReviewRow>> {
  const { rows } = await db.query<ReviewRow>(
    'SELECT id, status, applied_at IS NOT NULL AS applied, failure FROM reviews WHERE id = ANY($1)',
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row]));
}

/** Polls the reviews until every one satisfies `done`, or `timeoutMs` passes; resolves with how many do. */
export async function waitForReviews(
  db: Queryable,
  ids: string[],
  done: (row: ReviewRow) => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await readReviews(db, ids);
    const finished = ids.filter((id) => {
      const row = rows.get(id);
      return row !== undefined && done(row);
    }).length;
    if (finished === ids.length || Date.now() > deadline || signal?.aborted) return finished;
    await sleep(250);
  }
}

export const appliedOnce = (row: ReviewRow) => row.status === 'approved' && row.applied && row.failure === null;

/** Held writes' review ids; a write that was not held has none. */
export const reviewIdsOf = (records: WriteRecord[]) => records.flatMap((record) => (record.reviewId ? [record.reviewId] : []));

export interface HeldOutcome {
  held: number;
  approved: number;
  applied: number;
  lost: number;
  duplicated: number;
}

/**
 * Approves every held write through the API (they waited through whatever the scenario did), and counts what came
 * of them: each approved with a 200 and applied exactly once.
 */
export async function approveHeld(stack: Pick<Stack, 'apiUrl' | 'org' | 'db'>, held: WriteRecord[], signal: AbortSignal): Promise<HeldOutcome> {
  const reviewIds = reviewIdsOf(held);
  const decisions = await Promise.all(reviewIds.map((id) => decide(stack, id, 'approve')));
  const approved = decisions.filter((decision) => decision.status === 200).length;
  const applied = await waitForReviews(stack.db, reviewIds, appliedOnce, 90_000, signal);
  const ledger = await settleAndCount(stack.db, stack.org.orgId, held.map((record) => record.title), 5_000);
  return { held: reviewIds.length, approved, applied, lost: ledger.lost.length, duplicated: ledger.duplicated.length };
}
