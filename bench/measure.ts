import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { newId } from '../domain/kit/ids';

export const kinds = ['allow', 'review', 'approve', 'deny', 'floor', 'floorLocal', 'fairFloor', 'fairFloorLocal', 'insert'] as const;
export type Kind = (typeof kinds)[number];

/** One timed operation: resolves when the full answer is in, throws on a wrong one. */
export type Operation = (sequence: number) => Promise<void>;

export class WrongAnswerError extends Error {}

/** One HTTP exchange of the benchmark: the answer, its text (for error messages) and its JSON body, if any. */
export async function exchange(url: string, init: RequestInit): Promise<{ response: Response; text: string; body: any }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { response, text, body };
}

export const pageSize = 50;

/**
 * GET /api/v1/tasks?limit=50, checked to be a full page: the REST read the benchmark times. `check` may add a
 * condition on the answer and returns what is wrong, if anything.
 */
export function restTaskPage(apiUrl: string, token: string, label: string, check?: (response: Response) => string | undefined): Operation {
  const url = `${apiUrl}/api/v1/tasks?limit=${pageSize}`;
  const headers = { authorization: `Bearer ${token}` };
  return async (sequence) => {
    const { response, text, body } = await exchange(url, { headers });
    if (response.status !== 200 || body?.success !== true || !Array.isArray(body?.data) || body.data.length !== pageSize) {
      throw new WrongAnswerError(`${label} #${sequence}: expected 200 with ${pageSize} tasks, got ${response.status}: ${text.slice(0, 500)}`);
    }
    const wrong = check?.(response);
    if (wrong) throw new WrongAnswerError(`${label} #${sequence}: ${wrong}`);
  };
}

const expected = {
  allow: { status: 201, check: (body: any) => body?.success === true && typeof body?.data?.id === 'string' },
  review: { status: 202, check: (body: any) => body?.error?.code === 'pending_review' },
  deny: { status: 403, check: (body: any) => body?.error?.code === 'policy_denied' },
} as const;

export type GatedKind = keyof typeof expected;

/** Where a gated write's answers go: the workflow ids (to read their histories), the held writes' review ids. */
export interface WriteSinks {
  workflowIds?: string[];
  reviewIds?: string[];
}

/** A gated write of a task over REST whose title asks the policy for `kind`. */
export function gatedWrite(apiUrl: string, token: string, kind: GatedKind, sinks: WriteSinks = {}): Operation {
  const url = `${apiUrl}/api/v1/tasks`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const { status, check } = expected[kind];
  return async (sequence) => {
    const title = `${kind === 'allow' ? 'ordinary' : kind} bench task ${sequence}`;
    const { response, text, body } = await exchange(url, { method: 'POST', headers, body: JSON.stringify({ title, status: 'todo' }) });
    if (response.status !== status || !check(body)) {
      throw new WrongAnswerError(`${kind} #${sequence}: expected ${status}, got ${response.status}: ${text.slice(0, 500)}`);
    }
    const workflowId = response.headers.get('x-gatehouse-workflow-id');
    if (workflowId) sinks.workflowIds?.push(workflowId);
    if (kind === 'review') sinks.reviewIds?.push(body.review.id);
  };
}

/**
 * A person approving the oldest held write in `reviewIds` with their personal token: timed from the request to
 * its answer, which comes once the write is applied and carries the record it wrote.
 */
export function approveHeld(apiUrl: string, personalToken: string, reviewIds: string[]): Operation {
  const headers = { authorization: `Bearer ${personalToken}`, 'content-type': 'application/json' };
  return async (sequence) => {
    const reviewId = reviewIds.shift();
    if (!reviewId) throw new Error(`approve #${sequence}: no held write to approve`);
    const { response, text, body } = await exchange(`${apiUrl}/api/v1/reviews/${reviewId}/approve`, { method: 'POST', headers, body: '{}' });
    if (response.status !== 200 || body?.data?.status !== 'approved' || typeof body?.data?.result?.id !== 'string') {
      throw new WrongAnswerError(`approve #${sequence}: expected 200, approved and applied, got ${response.status}: ${text.slice(0, 500)}`);
    }
  };
}

/** The baseline: the same row insertTask writes, as one plain INSERT through a pg Pool. */
export function plainInsert(pool: pg.Pool, orgId: string): Operation {
  return async (sequence) => {
    const { rowCount } = await pool.query(
      `INSERT INTO tasks (id, org_id, title, description, status, priority, due_on, tags)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING id, title, description, status, priority, due_on, tags, created_at, updated_at`,
      [newId('task'), orgId, `plain bench task ${sequence}`, null, 'todo', 'normal', null, []],
    );
    if (rowCount !== 1) throw new WrongAnswerError(`insert #${sequence}: ${rowCount} rows written`);
  };
}

export interface RoundsResult<K extends string = Kind> {
  /** Milliseconds per sample, in the order taken. */
  samples: Record<K, number[]>;
  /** Answers checked (warm-up included); the run aborts on the first wrong one. */
  checked: Record<K, number>;
}

/**
 * Runs the kinds one at a time in rounds (allow, review, deny, insert, allow, …), so that drift on a
 * shared machine hits all kinds alike; the first `warmup` rounds are run and discarded. The kinds run in
 * the order of `operations`' keys, or in that order and its reverse by turns (`alternate`), so that no kind
 * always runs right after another.
 */
export async function runRounds<K extends string = Kind>(
  operations: Record<K, Operation>,
  options: {
    samples: number;
    warmup: number;
    alternate?: boolean;
    /**
     * For comparing several alike things (settings, servers): each round starts one further along and goes the
     * other way every other round, so that none always runs first, last, or right after another.
     */
    rotate?: boolean;
    onProgress?: (done: number, total: number) => void;
    aborted?: () => boolean;
  },
): Promise<RoundsResult<K>> {
  const keys = Object.keys(operations) as K[];
  const samples = Object.fromEntries(keys.map((kind) => [kind, [] as number[]])) as Record<K, number[]>;
  const checked = Object.fromEntries(keys.map((kind) => [kind, 0])) as Record<K, number>;
  const rounds = options.warmup + options.samples;
  for (let round = 0; round < rounds; round++) {
    if (options.aborted?.()) throw new Error('interrupted');
    const start = options.rotate ? round % keys.length : 0;
    const rotated = keys.map((_, step) => keys[(start + step) % keys.length]!);
    const order = (options.alternate || options.rotate) && round % 2 === 1 ? rotated.reverse() : rotated;
    for (const kind of order) {
      const started = performance.now();
      await operations[kind](round);
      const elapsed = performance.now() - started;
      checked[kind]++;
      if (round >= options.warmup) samples[kind].push(elapsed);
    }
    options.onProgress?.(round + 1, rounds);
  }
  return { samples, checked };
}
