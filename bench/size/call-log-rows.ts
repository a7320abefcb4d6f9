import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { callOutcomes, type CallOutcomeCategory } from '../../domain/usage/call-log';

// The size phase's call log: row i of a year of one organization's calls is a pure function of i, written once in
// SQL (to seed millions of rows in one statement) and once here (to know every answer the reads must give). Rows
// 0…n-1 are the log at size n, so the log grows from size to size without rewriting a row.
//
// Row i ended `offset(i)` milliseconds before the anchor, a Weyl sequence over the year (i × step mod a year, the
// step near the golden ratio's share of it and prime to it): any prefix of the rows is spread evenly over the
// year, and no two rows share an instant. Who called, through which interface and how it ended come from a
// multiplicative hash of i (Knuth's 2654435761), its bytes chosen apart.

export const yearMs = 365 * 24 * 60 * 60 * 1000;
const step = 12_045_680_131;
const hashFactor = 2_654_435_761;
const hourMs = 60 * 60 * 1000;

/** Eight keys, busiest first; slot 8 is a person's token (REST or MCP, no key), slot 9 a person in the console. */
export const keyLabels = ['bench agent', 'support agent', 'billing agent', 'sync script', 'research agent', 'intake bot', 'report job', 'night batch'] as const;
export const personTokenSlot = 8;
export const consoleSlot = 9;
/** Percent of the calls of each slot, summing to 100. */
const slotShares = [30, 20, 13, 10, 7, 5, 3, 2, 5, 5];

interface Ending {
  outcome: string;
  status: number;
  category: CallOutcomeCategory;
}

/** How calls end, each with its share in percent (summing to 100). */
const endings: (Ending & { share: number })[] = [
  { outcome: 'ok', status: 200, category: 'ok', share: 70 },
  { outcome: 'applied', status: 201, category: 'applied', share: 10 },
  { outcome: 'pending_review', status: 202, category: 'held', share: 4 },
  { outcome: 'policy_denied', status: 403, category: 'denied', share: 3 },
  { outcome: 'validation_failed', status: 400, category: 'refused', share: 5 },
  { outcome: 'not_found', status: 404, category: 'refused', share: 3 },
  { outcome: 'rate_limited', status: 429, category: 'refused', share: 2 },
  { outcome: 'forbidden', status: 403, category: 'refused', share: 1 },
  { outcome: 'internal', status: 500, category: 'error', share: 1 },
  { outcome: 'unavailable', status: 503, category: 'error', share: 1 },
];
const readOperations = ['tasks.list', 'customers.list', 'tasks.get', 'invoices.list'];
const writeOperations = ['tasks.create', 'expenses.create', 'work_logs.create'];

/** A table of 100 entries: entry p is the index of the share that percentile p falls in. */
function percentTable(shares: number[]): number[] {
  const table = shares.flatMap((share, index) => Array<number>(share).fill(index));
  if (table.length !== 100) throw new Error(`shares sum to ${table.length}, not 100`);
  return table;
}
const slotOfPercent = percentTable(slotShares);
const endingOfPercent = percentTable(endings.map((ending) => ending.share));

/** The parts of a row its reads filter and count by. */
export interface RowShape {
  slot: number;
  interface: 'rest' | 'mcp' | 'console';
  ending: Ending;
  operation: string;
}

export function rowShape(i: number): RowShape {
  const h = Math.imul(i, hashFactor | 0) >>> 0;
  const slot = slotOfPercent[h % 100]!;
  const endingIndex = endingOfPercent[(h >>> 8) % 100]!;
  const ending = endings[endingIndex]!;
  const operations = ending.category === 'ok' ? readOperations : writeOperations;
  return {
    slot,
    interface: slot === consoleSlot ? 'console' : (h >>> 16) % 10 < 6 ? 'rest' : 'mcp',
    ending,
    operation: operations[(h >>> 20) % operations.length]!,
  };
}

/** The id of row i: `call_s`, its instant (hex milliseconds) and i; as sortable as the service's own ids. */
export function rowId(i: number, endedMs: number): string {
  return `call_s${endedMs.toString(16).padStart(11, '0')}${String(i).padStart(14, '0')}`;
}

export interface SeedContext {
  orgId: string;
  /** The organization's keys by slot (0–7). */
  keyIds: readonly string[];
  /** The person whose token and console calls are slots 8 and 9. */
  userId: string;
  /** Row i ended `offset(i)` ms before this instant. */
  anchorMs: number;
}

/**
 * Rows from…to-1, in statements of `chunk` rows, each inserted in the order of their instants (the indexes on
 * time then grow at one end, or in one sweep, rather than at random).
 */
export async function insertRows(pool: pg.Pool, context: SeedContext, from: number, to: number, log: (line: string) => void, chunk = 1_000_000): Promise<number> {
  const started = performance.now();
  for (let first = from; first < to; first += chunk) {
    const last = Math.min(to, first + chunk);
    await pool.query(
      `INSERT INTO call_log (id, org_id, api_key_id, user_id, interface, operation, tool, status, outcome, latency_ms, created_at)
       SELECT 'call_s' || lpad(to_hex(r.ms), 11, '0') || lpad(r.i::text, 14, '0'), $3,
              CASE WHEN r.slot < 8 THEN ($4::text[])[r.slot + 1] END,
              CASE WHEN r.slot >= 8 THEN $5 END,
              r.interface, r.operation, CASE WHEN r.interface = 'mcp' THEN replace(r.operation, '.', '_') END,
              ($11::int[])[r.ending + 1], ($10::text[])[r.ending + 1], ((r.h >> 24) % 200) + 0.25,
              timestamptz 'epoch' + r.ms * interval '1 millisecond'
       FROM (SELECT s.i, s.h, s.ms, s.slot, s.ending,
                    CASE WHEN s.slot = 9 THEN 'console' WHEN (s.h >> 16) % 10 < 6 THEN 'rest' ELSE 'mcp' END AS interface,
                    CASE WHEN ($10::text[])[s.ending + 1] = 'ok' THEN ($12::text[])[((s.h >> 20) % cardinality($12::text[]))::int + 1]
                         ELSE ($13::text[])[((s.h >> 20) % cardinality($13::text[]))::int + 1] END AS operation
             FROM (SELECT g.i, g.h, $6::bigint - (g.i * $7::bigint) % $8::bigint AS ms,
                          ($9::int[])[(g.h % 100)::int + 1] AS slot, ($14::int[])[((g.h >> 8) % 100)::int + 1] AS ending
                   FROM (SELECT i, (i * ${hashFactor}::bigint) % 4294967296 AS h FROM generate_series($1::bigint, $2::bigint) AS i) AS g) AS s) AS r
       ORDER BY r.ms`,
      [
        first,
        last - 1,
        context.orgId,
        context.keyIds,
        context.userId,
        context.anchorMs,
        step,
        yearMs,
        slotOfPercent,
        endings.map((ending) => ending.outcome),
        endings.map((ending) => ending.status),
        readOperations,
        writeOperations,
        endingOfPercent,
      ],
    );
    log(`call log: ${last.toLocaleString('en')} rows seeded (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
  return (performance.now() - started) / 1000;
}

/** The agents' rows (slots 0–8, REST and MCP) counted by slot group and outcome; group 8 is every agent's. */
const groups = 9;
const allAgents = 8;
const categoryIndex = new Map(callOutcomes.map((category, index) => [category, index]));

/** A filter of the call list, and the newest rows that pass it (by offset, newest first). */
export interface ListFilter {
  name: string;
  query: { api_key_slot?: number; interface?: 'rest' | 'mcp'; outcome?: CallOutcomeCategory };
}

export interface ExpectedCall {
  id: string;
  slot: number;
  interface: 'rest' | 'mcp';
  operation: string;
  ending: Ending;
  endedMs: number;
}

/** Hours kept counted back from the anchor: the 7-day chart's first day begins at most 7 days before now. */
const countedHours = 24 * 10;

/**
 * Every answer the Command Center's reads must give over rows 0…n-1: per hour of the last days, the calls of
 * each key (and of all agents) by how they ended; for each list filter, its newest `keep` rows.
 */
export class CallLogModel {
  readonly size: number;
  readonly anchorMs: number;
  private readonly firstHour: number;
  private readonly hours: Int32Array;
  readonly newest: Map<string, ExpectedCall[]>;

  constructor(size: number, anchorMs: number, filters: ListFilter[], keep: number) {
    this.size = size;
    this.anchorMs = anchorMs;
    this.firstHour = Math.floor(anchorMs / hourMs) - countedHours + 1;
    this.hours = new Int32Array(countedHours * groups * callOutcomes.length);
    const countedMs = countedHours * hourMs;
    // Per filter, the best `keep` (offset, i) pairs seen so far, the smallest offset first.
    const best = filters.map(() => ({ offsets: [] as number[], rows: [] as number[] }));
    let offset = 0;
    for (let i = 0; i < size; i++, offset = (offset + step) % yearMs) {
      const shape = rowShape(i);
      if (shape.interface === 'console') continue;
      if (offset < countedMs) {
        const hour = Math.floor((anchorMs - offset) / hourMs) - this.firstHour;
        if (hour >= 0) {
          const category = categoryIndex.get(shape.ending.category)!;
          const base = hour * groups * callOutcomes.length;
          this.hours[base + allAgents * callOutcomes.length + category]!++;
          if (shape.slot < 8) this.hours[base + shape.slot * callOutcomes.length + category]!++;
        }
      }
      for (let f = 0; f < filters.length; f++) {
        const kept = best[f]!;
        if (kept.offsets.length === keep && offset >= kept.offsets[keep - 1]!) continue;
        const { query } = filters[f]!;
        if (query.api_key_slot !== undefined && shape.slot !== query.api_key_slot) continue;
        if (query.interface !== undefined && shape.interface !== query.interface) continue;
        if (query.outcome !== undefined && shape.ending.category !== query.outcome) continue;
        let at = kept.offsets.length;
        while (at > 0 && kept.offsets[at - 1]! > offset) at--;
        kept.offsets.splice(at, 0, offset);
        kept.rows.splice(at, 0, i);
        if (kept.offsets.length > keep) {
          kept.offsets.pop();
          kept.rows.pop();
        }
      }
    }
    this.newest = new Map(
      filters.map((filter, f) => [
        filter.name,
        best[f]!.rows.map((i, index) => {
          const shape = rowShape(i);
          const endedMs = anchorMs - best[f]!.offsets[index]!;
          return { id: rowId(i, endedMs), slot: shape.slot, interface: shape.interface as 'rest' | 'mcp', operation: shape.operation, ending: shape.ending, endedMs };
        }),
      ]),
    );
  }

  /** The calls of a slot (0–7), or of all agents (undefined), from `startMs` (on the hour) on, by outcome. */
  countsFrom(startMs: number, endMs: number, slot?: number): Record<CallOutcomeCategory, number> {
    const counts = Object.fromEntries(callOutcomes.map((category) => [category, 0])) as Record<CallOutcomeCategory, number>;
    if (startMs % hourMs !== 0 || (Number.isFinite(endMs) && endMs % hourMs !== 0)) throw new Error(`${new Date(startMs).toISOString()} is not on the hour`);
    const from = Math.max(0, startMs / hourMs - this.firstHour);
    const to = Math.min(countedHours, Number.isFinite(endMs) ? endMs / hourMs - this.firstHour : countedHours);
    if (startMs / hourMs < this.firstHour) throw new Error('the model does not count that far back');
    const group = slot ?? allAgents;
    for (let hour = from; hour < to; hour++) {
      const base = (hour * groups + group) * callOutcomes.length;
      callOutcomes.forEach((category, index) => {
        counts[category] += this.hours[base + index]!;
      });
    }
    return counts;
  }
}

/** Rows 0…n-1 that ended before `cutoffMs`, and those kept, by slot (0–9). */
export function rowsBefore(size: number, anchorMs: number, cutoffMs: number): { before: number; keptBySlot: number[] } {
  const keptBySlot = Array<number>(10).fill(0);
  let before = 0;
  let offset = 0;
  for (let i = 0; i < size; i++, offset = (offset + step) % yearMs) {
    if (anchorMs - offset < cutoffMs) before++;
    else keptBySlot[rowShape(i).slot]!++;
  }
  return { before, keptBySlot };
}
