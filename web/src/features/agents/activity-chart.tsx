import { useEffect, useRef, useState } from 'react';
import { agentInWords } from '../../lib/agent-name';
import { BarChart, type BarGroup } from '../../lib/charts';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { useLatest } from '../../lib/use-live';
import { agentsApi, type Activity, type ActivityRange, type AgentDay, type CallOutcome } from './api';
import { KeyOptions } from './key-options';
import { outcomeSeries, outcomeWords } from './outcomes';

const ranges: { value: ActivityRange; option: string; label: string; words: string }[] = [
  { value: '24h', option: '24 hours, by hour', label: 'the last 24 hours, by the hour', words: 'the last 24 hours' },
  { value: '7d', option: '7 days, by day', label: 'the last 7 days, by the day', words: 'the last 7 days' },
];

const rangeOf = (activity: Activity) => ranges.find((option) => option.value === activity.range)!;

/** A bucket's name, in the organization's time zone (where its days begin): "14:00" (short enough for 24 bars), or "Thu 26". */
function bucketLabel(activity: Activity): (start: string) => string {
  const options: Intl.DateTimeFormatOptions = activity.bucket === 'hour' ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } : { weekday: 'short', day: 'numeric' };
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat(undefined, { ...options, timeZone: activity.timezone });
  } catch {
    format = new Intl.DateTimeFormat(undefined, options);
  }
  return (start) => format.format(new Date(start));
}

/** The chart in a sentence: how many calls, how they ended, and the busiest hour or day. */
function summaryOf(activity: Activity, groups: BarGroup[], whose: string, words: string): string {
  const totals = Object.fromEntries(outcomeSeries.map(({ key }) => [key, activity.buckets.reduce((sum, bucket) => sum + bucket[key as CallOutcome], 0)]));
  const calls = activity.buckets.reduce((sum, bucket) => sum + bucket.calls, 0);
  if (calls === 0) return `No calls ${whose} in ${words}.`;
  const busiest = activity.buckets.reduce((best, bucket, index) => (bucket.calls > activity.buckets[best]!.calls ? index : best), 0);
  return `${calls} ${calls === 1 ? 'call' : 'calls'} ${whose} in ${words}: ${outcomeWords(totals)}. The busiest ${activity.bucket} was ${groups[busiest]!.label}, with ${activity.buckets[busiest]!.calls}.`;
}

/**
 * The agents' calls over the last day or week as stacked bars, by how they ended, for every key or one; fetched
 * again (in the background) whenever `refreshes` moves, as the page's live updates say calls happened.
 */
export function ActivityChart({ days, refreshes }: { days: AgentDay[] | undefined; refreshes: number }) {
  const [range, setRange] = useState<ActivityRange>('24h');
  const [keyId, setKeyId] = useState<string>();
  // The answer with the key it is for (the select may already have moved on).
  const [shown, setShown] = useState<{ activity: Activity; keyId: string | undefined }>();
  const [error, setError] = useState<unknown>();
  const latest = useLatest();
  const loaded = useRef<string | undefined>(undefined);

  useEffect(() => {
    const asked = `${range}:${keyId ?? ''}`;
    // The same question again is the live refresh: in the background, the picture stays until the answer.
    const background = loaded.current === asked;
    loaded.current = asked;
    latest(
      agentsApi.activity(range, keyId, background),
      (activity) => {
        setShown({ activity, keyId });
        setError(undefined);
      },
      setError,
    );
  }, [range, keyId, refreshes, latest]);

  const activity = shown?.activity;
  const day = days?.find((candidate) => candidate.api_key_id === shown?.keyId);
  const whose = day ? `by ${agentInWords(day.label, day.oauth_client_id === null)}` : 'by all keys';
  const nameOf = activity && bucketLabel(activity);
  const groups: BarGroup[] = (activity?.buckets ?? []).map((bucket) => ({
    key: bucket.start,
    label: nameOf!(bucket.start),
    values: Object.fromEntries(outcomeSeries.map(({ key }) => [key, bucket[key as CallOutcome]])),
  }));

  return (
    <section aria-labelledby="activity-heading">
      <h2 id="activity-heading">Calls over time</h2>
      <form className="row filters" aria-label="Choose the calls shown over time" onSubmit={(event) => event.preventDefault()}>
        <FormField id="activity-range" label="Period">
          {(control) => (
            <select {...control} value={range} onChange={(event) => setRange(event.target.value as ActivityRange)}>
              {ranges.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.option}
                </option>
              ))}
            </select>
          )}
        </FormField>
        <FormField id="activity-key" label="Calls of">
          {(control) => (
            <select {...control} value={keyId ?? ''} onChange={(event) => setKeyId(event.target.value || undefined)}>
              <option value="">Every key</option>
              <KeyOptions days={days} />
            </select>
          )}
        </FormField>
      </form>
      <FormError error={error} />
      {activity && (
        <BarChart
          title={`Calls ${whose}, ${rangeOf(activity).label}`}
          summary={summaryOf(activity, groups, whose, rangeOf(activity).words)}
          series={outcomeSeries}
          groups={groups}
          groupHeading={activity.bucket === 'hour' ? 'Hour' : 'Day'}
          height={220}
        />
      )}
      {!activity && !error && <p role="status">Loading…</p>}
    </section>
  );
}
