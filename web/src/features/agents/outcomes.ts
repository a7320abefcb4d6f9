import type { Series } from '../../lib/charts';
import type { CallOutcome } from './api';

export const outcomeNames: Record<CallOutcome, string> = { ok: 'OK', applied: 'Applied', held: 'Held', denied: 'Denied', refused: 'Refused', error: 'Error' };

/** How the charts draw a call's outcome: reads in blue, writes by their fate, refusals grey, our errors dark. */
export const outcomeSeries: Series[] = [
  { key: 'ok', name: 'OK (reads)', tone: 'accent' },
  { key: 'applied', name: 'Applied', tone: 'ok' },
  { key: 'held', name: 'Held', tone: 'waiting' },
  { key: 'denied', name: 'Denied', tone: 'off' },
  { key: 'refused', name: 'Refused', tone: 'neutral' },
  { key: 'error', name: 'Error', tone: 'dark' },
];

/** "3 OK, 1 held": the outcomes that happened, in the series' order; "none" when nothing did. */
export function outcomeWords(counts: Partial<Record<CallOutcome, number>>): string {
  const words = outcomeSeries.filter(({ key }) => (counts[key as CallOutcome] ?? 0) > 0).map(({ key }) => `${counts[key as CallOutcome]} ${outcomeNames[key as CallOutcome].toLowerCase()}`);
  return words.length ? words.join(', ') : 'none';
}
