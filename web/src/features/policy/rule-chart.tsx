import { useEffect, useRef, useState } from 'react';
import { BarChart, type Series } from '../../lib/charts';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { useLatest, useLive } from '../../lib/use-live';
import { policyApi, type RuleCountRange, type RuleCounts } from './api';

const ranges: { value: RuleCountRange; label: string }[] = [
  { value: '24h', label: 'the last 24 hours' },
  { value: '7d', label: 'the last 7 days' },
  { value: '30d', label: 'the last 30 days' },
];

const decided: Series[] = [
  { key: 'allow', name: 'Allowed', tone: 'ok' },
  { key: 'review', name: 'Held for review', tone: 'waiting' },
  { key: 'deny', name: 'Denied', tone: 'off' },
];

/** A rule's name on the chart: its @id, or what deciding without one means. */
const ruleName = (policyId: string | null) => policyId ?? 'No rule permitted it';

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The chart in a sentence: how many writes, how many rules, and the busiest rule's decisions. */
function summaryOf(counts: RuleCounts, words: string): string {
  if (counts.decisions === 0) return `No write was decided in ${words}.`;
  const [top] = counts.rules;
  const ways = top ? decided.filter(({ key }) => top[key as 'allow'] > 0).map(({ key, name }) => `${top[key as 'allow']} ${name.toLowerCase()}`) : [];
  return (
    `${plural(counts.decisions, 'write')} decided in ${words} by ${plural(counts.rules.length, 'rule')}.` +
    (top ? ` The busiest, ${ruleName(top.policy_id)}, decided ${top.total}: ${ways.join(', ')}.` : '')
  );
}

/**
 * How often each rule decided the organization's writes over a period, a bar per rule split by what it decided;
 * fetched again as agents' calls happen (at most every 1.5 s).
 */
export function RuleChart() {
  const [range, setRange] = useState<RuleCountRange>('7d');
  const [counts, setCounts] = useState<RuleCounts & { range: RuleCountRange }>();
  const [error, setError] = useState<unknown>();
  const latest = useLatest();

  const load = (background: boolean) =>
    latest(
      policyApi.ruleCounts(range, background),
      (answer) => {
        setCounts({ ...answer, range });
        setError(undefined);
      },
      setError,
    );
  const loadRef = useRef(load);
  useEffect(() => {
    loadRef.current = load;
  });
  useEffect(() => loadRef.current(false), [range]);

  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);
  useLive(['calls'], () => {
    timer.current ??= window.setTimeout(() => {
      timer.current = undefined;
      loadRef.current(true);
    }, 1500);
  });

  const words = (value: RuleCountRange) => ranges.find((option) => option.value === value)!.label;

  return (
    <section className="card" aria-labelledby="rule-chart-heading">
      <h2 id="rule-chart-heading">How often each rule decided</h2>
      <p className="hint">Every gated write is decided by the rules that matched it: a write two rules decided counts for each.</p>
      <form className="row filters" aria-label="Choose the period of the rules' decisions" onSubmit={(event) => event.preventDefault()}>
        <FormField id="rule-chart-range" label="Period">
          {(control) => (
            <select {...control} value={range} onChange={(event) => setRange(event.target.value as RuleCountRange)}>
              {ranges.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          )}
        </FormField>
      </form>
      <FormError error={error} />
      {counts ? (
        <BarChart
          title={`Decisions by rule, ${words(counts.range)}`}
          summary={summaryOf(counts, words(counts.range))}
          series={decided}
          groups={counts.rules.map((rule) => ({ key: rule.policy_id ?? undefined, label: ruleName(rule.policy_id), values: { allow: rule.allow, review: rule.review, deny: rule.deny } }))}
          horizontal
          groupHeading="Rule"
        />
      ) : (
        !error && <p role="status">Loading…</p>
      )}
    </section>
  );
}
