import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { connectDatabase } from '../db/database';
import type { ImportCounts } from '../data-import/import';
import { seedOrganization } from '../data-import/seed';
import { exchange, gatedWrite, pageSize, WrongAnswerError, type Operation } from './measure';
import type { BenchOrganization } from './organization';

export const readKinds = ['search', 'taskPage'] as const;
export type ReadKind = (typeof readKinds)[number];

/**
 * What people type into a customer search box: last names, first names, parts of company names, a couple of
 * full names. On the `large` seed each matches between 1 and ~300 of the 10,000 customers (checked before
 * measuring), so some searches fill a page at once and some scan the whole organization for a match or two.
 */
export const searchTerms = [
  'chen', 'Garcia', 'nguyen', 'Maya', 'oliveira', 'Schmidt', 'harbor', 'Dental', 'northwind', 'park',
  'ross', 'lind', 'bakery', 'Tanaka', 'kowalski', 'Weber', 'Elena Rossi', 'Omar Haddad',
] as const;

/** Task list pages walked with the cursor before starting again from the first page. */
export const taskPagesPerWalk = 3;

export interface SeedResult {
  size: 'large';
  /** Wall time of seedOrganization (generate, validate, one import transaction). */
  seconds: number;
  /** Wall time of the VACUUM ANALYZE that follows, so that no autovacuum or stale plan lands mid-measurement. */
  vacuumAnalyzeSeconds: number;
  counts: ImportCounts;
}

/** Seeds the bench organization with the `large` demo data through the domain function, as `gatehouse seed` does. */
export async function seedLarge(databaseUrl: string, organization: BenchOrganization): Promise<SeedResult> {
  const db = connectDatabase(databaseUrl, { maxConnections: 2 });
  try {
    const started = performance.now();
    const counts = await seedOrganization(db, { id: organization.orgId, slug: organization.slug }, { size: 'large' });
    const seeded = performance.now();
    await db.query('VACUUM ANALYZE');
    return { size: 'large', seconds: (seeded - started) / 1000, vacuumAnalyzeSeconds: (performance.now() - seeded) / 1000, counts };
  } finally {
    await db.close();
  }
}

/** How many of the organization's customers each term matches; throws unless it is some but not all. */
export async function countSearchMatches(pool: pg.Pool, orgId: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ total: number }>('SELECT count(*)::int AS total FROM customers WHERE org_id = $1', [orgId]);
  const total = rows[0]!.total;
  const matches: Record<string, number> = {};
  for (const term of searchTerms) {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM customers WHERE org_id = $1 AND (name ILIKE $2 OR company ILIKE $2 OR email ILIKE $2)`,
      [orgId, `%${term}%`],
    );
    const n = rows[0]!.n;
    if (n === 0 || n >= total) throw new Error(`search term "${term}" matches ${n} of ${total} customers; it must match some but not all`);
    matches[term] = n;
  }
  return matches;
}

async function getJson(url: string, token: string, label: string): Promise<any> {
  const { response, text, body } = await exchange(url, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200 || body?.success !== true || !Array.isArray(body?.data)) {
    throw new WrongAnswerError(`${label}: expected 200 with data, got ${response.status}: ${text.slice(0, 500)}`);
  }
  return body;
}

/** GET /api/v1/customers?search=…&limit=50, the term taken in turn from searchTerms; every item must match it. */
export function customerSearch(apiUrl: string, token: string): Operation {
  return async (sequence) => {
    const term = searchTerms[sequence % searchTerms.length]!;
    const url = `${apiUrl}/api/v1/customers?search=${encodeURIComponent(term)}&limit=${pageSize}`;
    const label = `customer search "${term}" #${sequence}`;
    const body = await getJson(url, token, label);
    const items = body.data as Array<{ name: string; company: string | null; email: string | null }>;
    if (items.length === 0 || items.length > pageSize) throw new WrongAnswerError(`${label}: ${items.length} customers`);
    const needle = term.toLowerCase();
    const stray = items.find((item) => ![item.name, item.company, item.email].some((value) => value?.toLowerCase().includes(needle)));
    if (stray) throw new WrongAnswerError(`${label}: ${JSON.stringify(stray).slice(0, 300)} does not match`);
  };
}

/**
 * GET /api/v1/tasks?status=todo&limit=50, walking `taskPagesPerWalk` pages with the cursor and starting over.
 * Every page must be full, all todo, newest first, and say there is a next page. Run it sequentially: it keeps
 * the cursor between calls.
 */
export function taskListPage(apiUrl: string, token: string): Operation {
  let cursor: string | undefined;
  return async (sequence) => {
    const page = sequence % taskPagesPerWalk;
    if (page === 0) cursor = undefined;
    const url = `${apiUrl}/api/v1/tasks?status=todo&limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const label = `task list page ${page + 1} #${sequence}`;
    const body = await getJson(url, token, label);
    const items = body.data as Array<{ id: string; status: string }>;
    if (items.length !== pageSize) throw new WrongAnswerError(`${label}: ${items.length} tasks, not ${pageSize}`);
    if (items.some((item, index) => item.status !== 'todo' || (index > 0 && item.id >= items[index - 1]!.id))) {
      throw new WrongAnswerError(`${label}: a task not todo, or out of order`);
    }
    const next = body.page?.next_cursor;
    if (typeof next !== 'string') throw new WrongAnswerError(`${label}: no next_cursor`);
    cursor = next;
  };
}

export interface WriteLoadResult {
  concurrency: number;
  /** The reads' measurement window the figures below count in. */
  windowSeconds: number;
  writesInWindow: number;
  writesPerSecond: number;
  /** Writes and errors from start to stop, ramp-up and drain included. */
  writesTotal: number;
  errors: number;
  errorSamples: string[];
  /** Latency of the gated writes completed in the window (ms). */
  latencyMs: number[];
}

export interface WriteLoad {
  /** Resolves once every loop has had `count` writes answered, so the reads start under steady load. */
  rampedUp(count: number, timeoutMs: number): Promise<void>;
  /** Marks the start and the end of the measurement window. */
  openWindow(): void;
  closeWindow(): void;
  /** Throws when no write has succeeded in the last `ms` (the load stalled or only errs). */
  assertFlowing(ms: number): void;
  /** Lets every loop finish its request in flight, then resolves with the counts. */
  stop(): Promise<WriteLoadResult>;
}

/**
 * `concurrency` loops of gated Allow writes (POST /api/v1/tasks, 201) against the api, back to back. A wrong
 * answer is counted, not thrown; the loop waits 100 ms after one so that a failing service is not hammered.
 */
export function startWriteLoad(apiUrl: string, token: string, concurrency: number, firstSequence: number): WriteLoad {
  const write = gatedWrite(apiUrl, token, 'allow');
  let stopping = false;
  let sequence = firstSequence;
  let window: { start: number; end?: number } | undefined;
  const completions: Array<{ at: number; ms: number }> = [];
  const perLoop = new Array<number>(concurrency).fill(0);
  let errors = 0;
  const errorSamples: string[] = [];
  let lastSuccess = performance.now();

  const loop = async (index: number) => {
    while (!stopping) {
      const started = performance.now();
      try {
        await write(sequence++);
        const at = performance.now();
        completions.push({ at, ms: at - started });
        perLoop[index]!++;
        lastSuccess = at;
      } catch (error) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push((error as Error).message.slice(0, 300));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const loops = Array.from({ length: concurrency }, (_, index) => loop(index));

  return {
    async rampedUp(count, timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      while (perLoop.some((done) => done < count)) {
        if (performance.now() > deadline) throw new Error(`the write load did not ramp up within ${timeoutMs / 1000} s (${errors} errors: ${errorSamples[0] ?? 'none'})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    openWindow() {
      window = { start: performance.now() };
    },
    closeWindow() {
      if (window) window.end = performance.now();
    },
    assertFlowing(ms) {
      if (performance.now() - lastSuccess > ms) {
        throw new Error(`no gated write succeeded under load for ${ms / 1000} s (${errors} errors: ${errorSamples.at(-1) ?? 'none'})`);
      }
    },
    async stop() {
      stopping = true;
      await Promise.all(loops);
      const start = window?.start ?? 0;
      const end = window?.end ?? performance.now();
      const inWindow = completions.filter((completion) => completion.at >= start && completion.at <= end);
      const windowSeconds = (end - start) / 1000;
      return {
        concurrency,
        windowSeconds,
        writesInWindow: inWindow.length,
        writesPerSecond: windowSeconds > 0 ? inWindow.length / windowSeconds : 0,
        writesTotal: completions.length,
        errors,
        errorSamples,
        latencyMs: inWindow.map((completion) => completion.ms),
      };
    },
  };
}
