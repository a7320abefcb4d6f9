import type pg from 'pg';
import { encodeCursor } from '../../domain/kit/pagination';
import { callOutcomes, type CallOutcomeCategory } from '../../domain/usage/call-log';
import { exchange, WrongAnswerError, type Operation } from '../measure';
import { keyLabels, type CallLogModel, type ExpectedCall, type ListFilter } from './call-log-rows';

// The Agent Command Center's reads of the call log, as the console's Agents page makes them (a session cookie on
// /console/api/v1/agents…), each answer checked against the model of what was seeded.

export const pageSize = 50;
/** Rows each filter's model keeps: three pages and the one that says a fourth exists. */
export const keptPerFilter = 3 * pageSize + 1;

/** The list filters measured: the page's own (the whole log, the busiest key's run) and those people choose. */
export const listFilters: ListFilter[] = [
  { name: 'all', query: {} },
  { name: 'busiestKey', query: { api_key_slot: 0 } },
  { name: 'quietKey', query: { api_key_slot: 7 } },
  { name: 'mcp', query: { interface: 'mcp' } },
  { name: 'denied', query: { outcome: 'denied' } },
  { name: 'keyErrors', query: { api_key_slot: 5, outcome: 'error' } },
];

export const commandCenterReads = [
  'pageOpen',
  'agents.list',
  'agents.calls',
  'agents.calls.page3',
  'agents.calls.quietKey',
  'agents.calls.mcp',
  'agents.calls.denied',
  'agents.calls.keyErrors',
  'agents.activity.24h',
  'agents.activity.7d',
  'agents.activity.7d.key',
] as const;
export type CommandCenterRead = (typeof commandCenterReads)[number];

export interface CommandCenterContext {
  apiUrl: string;
  /** The console session's cookie (`gatehouse_session=…`). */
  cookie: string;
  keyIds: readonly string[];
  timezone: string;
  model: CallLogModel;
  /** Where the start of today in the organization's zone is asked, should the day turn during a run. */
  pool: pg.Pool;
}

async function consoleGet(context: CommandCenterContext, path: string, label: string): Promise<any> {
  const { response, text, body } = await exchange(`${context.apiUrl}/console/api/v1${path}`, { headers: { cookie: context.cookie } });
  if (response.status !== 200 || body?.success !== true) throw new WrongAnswerError(`${label}: expected 200, got ${response.status}: ${text.slice(0, 500)}`);
  return body;
}

function expectEqual(label: string, what: string, actual: unknown, expected: unknown): void {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new WrongAnswerError(`${label}: ${what} is ${a.slice(0, 400)}, expected ${e.slice(0, 400)}`);
}

/** The start of today in the organization's zone, as the database computes it. */
async function startOfToday(context: CommandCenterContext): Promise<number> {
  const { rows } = await context.pool.query<{ ms: string }>(
    `SELECT (extract(epoch FROM date_trunc('day', now() AT TIME ZONE $1::text) AT TIME ZONE $1::text) * 1000)::bigint AS ms`,
    [context.timezone],
  );
  return Number(rows[0]!.ms);
}

/**
 * Checks the agents list against the model for today as it began when the run started; if the day has turned
 * since, asks again once.
 */
function agentsListCheck(context: CommandCenterContext) {
  let today: number | undefined;
  const expectedFor = (todayMs: number) =>
    context.keyIds
      .map((id, slot) => {
        const counts = context.model.countsFrom(todayMs, Infinity, slot);
        const calls = callOutcomes.reduce((sum, category) => sum + counts[category], 0);
        return { api_key_id: id, label: keyLabels[slot]!, calls_today: calls, applied_today: counts.applied, held_today: counts.held, denied_today: counts.denied };
      })
      .sort((a, b) => b.calls_today - a.calls_today || a.label.localeCompare(b.label));
  return async (data: any, label: string) => {
    if (!Array.isArray(data)) throw new WrongAnswerError(`${label}: no list`);
    const shown = data.map((day: any) => ({
      api_key_id: day.api_key_id,
      label: day.label,
      calls_today: day.calls_today,
      applied_today: day.applied_today,
      held_today: day.held_today,
      denied_today: day.denied_today,
    }));
    today ??= await startOfToday(context);
    if (JSON.stringify(shown) === JSON.stringify(expectedFor(today))) return;
    today = await startOfToday(context);
    expectEqual(label, 'the keys of the day', shown, expectedFor(today));
  };
}

/** The list items a filter's page must show, as the console's API answers them. */
function shownCall(call: ExpectedCall, keyIds: readonly string[]) {
  return {
    id: call.id,
    api_key_id: call.slot < 8 ? keyIds[call.slot] : null,
    api_key_label: call.slot < 8 ? keyLabels[call.slot] : null,
    interface: call.interface,
    operation: call.operation,
    outcome: call.ending.category,
    code: call.ending.outcome,
    status: call.ending.status,
    created_at: new Date(call.endedMs).toISOString(),
  };
}

function callsPath(context: CommandCenterContext, filter: ListFilter, cursor?: string): string {
  const params = new URLSearchParams({ limit: String(pageSize) });
  if (filter.query.api_key_slot !== undefined) params.set('api_key_id', context.keyIds[filter.query.api_key_slot]!);
  if (filter.query.interface) params.set('interface', filter.query.interface);
  if (filter.query.outcome) params.set('outcome', filter.query.outcome);
  if (cursor) params.set('cursor', cursor);
  return `/agents/calls?${params}`;
}

/** A page of a filter's calls (`page` from 0), checked item by item, and its next cursor. */
async function callsPage(context: CommandCenterContext, filterName: string, page: number, label: string): Promise<void> {
  const filter = listFilters.find((candidate) => candidate.name === filterName)!;
  const newest = context.model.newest.get(filterName)!;
  const from = page * pageSize;
  const cursor = page > 0 ? encodeCursor(newest[from - 1]!.id) : undefined;
  const body = await consoleGet(context, callsPath(context, filter, cursor), label);
  const expected = newest.slice(from, from + pageSize).map((call) => shownCall(call, context.keyIds));
  const shown = (body.data as any[]).map(({ latency_ms: _, ...item }) => item);
  expectEqual(label, 'the page', shown, expected);
  const more = newest.length > from + pageSize;
  expectEqual(label, 'next_cursor', body.page?.next_cursor ?? null, more ? encodeCursor(newest[from + pageSize - 1]!.id) : null);
}

/** A chart's answer: its buckets' starts are the server's; their counts must be the model's for those hours. */
async function activity(context: CommandCenterContext, range: '24h' | '7d', slot: number | undefined, label: string): Promise<void> {
  const query = new URLSearchParams({ range });
  if (slot !== undefined) query.set('api_key_id', context.keyIds[slot]!);
  const { data } = await consoleGet(context, `/agents/activity?${query}`, label);
  const buckets = data?.buckets as any[];
  if (!Array.isArray(buckets) || buckets.length !== (range === '24h' ? 24 : 7)) throw new WrongAnswerError(`${label}: ${buckets?.length} buckets`);
  const starts = buckets.map((bucket) => Date.parse(bucket.start));
  if (starts.some((start, index) => index > 0 && start <= starts[index - 1]!)) throw new WrongAnswerError(`${label}: buckets out of order`);
  const shown = buckets.map((bucket) => Object.fromEntries(['calls', ...callOutcomes].map((name) => [name, bucket[name]])));
  const expected = starts.map((start, index) => {
    const counts = context.model.countsFrom(start, starts[index + 1] ?? Infinity, slot);
    return { calls: callOutcomes.reduce((sum, category: CallOutcomeCategory) => sum + counts[category], 0), ...counts };
  });
  expectEqual(label, 'the buckets', shown, expected);
}

/** Every read measured, each a timed, checked operation. */
export function commandCenterOperations(context: CommandCenterContext): Record<CommandCenterRead, Operation> {
  const checkAgents = agentsListCheck(context);
  const agentsList = async (label: string) => {
    const { data } = await consoleGet(context, '/agents', label);
    await checkAgents(data, label);
    return data as Array<{ api_key_id: string; calls_today: number }>;
  };
  return {
    // What the page asks for the call log when it opens, at once as the browser does: the agents of the day, the
    // newest calls and the day's chart; then, once the agents are in, the run of the busiest key.
    pageOpen: async (sequence) => {
      const label = `page open #${sequence}`;
      await Promise.all([
        agentsList(label).then(async (days) => {
          if (days[0]?.api_key_id !== context.keyIds[0]) throw new WrongAnswerError(`${label}: the busiest key is ${days[0]?.api_key_id}`);
          await callsPage(context, 'busiestKey', 0, `${label} (busiest key's run)`);
        }),
        callsPage(context, 'all', 0, label),
        activity(context, '24h', undefined, label),
      ]);
    },
    'agents.list': async (sequence) => {
      await agentsList(`agents.list #${sequence}`);
    },
    'agents.calls': (sequence) => callsPage(context, 'all', 0, `agents.calls #${sequence}`),
    'agents.calls.page3': (sequence) => callsPage(context, 'all', 2, `agents.calls page 3 #${sequence}`),
    'agents.calls.quietKey': (sequence) => callsPage(context, 'quietKey', 0, `agents.calls of the quietest key #${sequence}`),
    'agents.calls.mcp': (sequence) => callsPage(context, 'mcp', 0, `agents.calls over MCP #${sequence}`),
    'agents.calls.denied': (sequence) => callsPage(context, 'denied', 0, `agents.calls denied #${sequence}`),
    'agents.calls.keyErrors': (sequence) => callsPage(context, 'keyErrors', 0, `agents.calls of a key's errors #${sequence}`),
    'agents.activity.24h': (sequence) => activity(context, '24h', undefined, `agents.activity 24h #${sequence}`),
    'agents.activity.7d': (sequence) => activity(context, '7d', undefined, `agents.activity 7d #${sequence}`),
    'agents.activity.7d.key': (sequence) => activity(context, '7d', 0, `agents.activity 7d of a key #${sequence}`),
  };
}
