import { useEffect, useRef, useState, type RefObject } from 'react';
import { agentInWords } from '../../lib/agent-name';
import { Timeline, type TimelineEvent } from '../../lib/charts';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { useLatest } from '../../lib/use-live';
import { agentsApi, type AgentCall, type AgentDay, type CallOutcome } from './api';
import { KeyOptions } from './key-options';
import { outcomeSeries, outcomeWords } from './outcomes';

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const date = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The run in a sentence: how many calls, from when to when, over which operations, how they ended. */
function summaryOf(calls: AgentCall[], agent: string): string {
  if (calls.length === 0) return `${agent} has made no calls yet.`;
  const first = new Date(calls[0]!.created_at);
  const last = new Date(calls[calls.length - 1]!.created_at);
  const operations = new Set(calls.map((call) => call.operation)).size;
  const counts: Partial<Record<CallOutcome, number>> = {};
  for (const call of calls) counts[call.outcome] = (counts[call.outcome] ?? 0) + 1;
  const span = first.toDateString() === last.toDateString() ? `${date.format(first)} to ${clock.format(last)}` : `${date.format(first)} to ${date.format(last)}`;
  return `${calls.length} ${calls.length === 1 ? 'call' : 'calls'} from ${span}, over ${operations} ${operations === 1 ? 'operation' : 'operations'}: ${outcomeWords(counts)}.`;
}

/**
 * One key's recent run: its last 50 calls on a time line, a lane for each operation, each marked by how it ended;
 * fetched again (in the background) whenever `refreshes` moves.
 */
export function RunTimeline(props: {
  days: AgentDay[] | undefined;
  /** The key whose run is shown. */
  keyId: string | undefined;
  onKeyChange: (keyId: string | undefined) => void;
  refreshes: number;
  headingRef: RefObject<HTMLHeadingElement | null>;
}) {
  const { days, keyId, onKeyChange, refreshes, headingRef } = props;
  const [shown, setShown] = useState<{ calls: AgentCall[]; keyId: string }>();
  const [error, setError] = useState<unknown>();
  const latest = useLatest();
  const loaded = useRef<string | undefined>(undefined);

  useEffect(() => {
    if (!keyId) return;
    const background = loaded.current === keyId;
    loaded.current = keyId;
    latest(
      agentsApi.calls({ api_key_id: keyId }, background),
      (calls) => {
        // Oldest first: a run reads in the order it happened.
        setShown({ calls: [...calls].reverse(), keyId });
        setError(undefined);
      },
      setError,
    );
  }, [keyId, refreshes, latest]);

  const day = days?.find((candidate) => candidate.api_key_id === shown?.keyId);
  const agent = day ? agentInWords(day.label, day.oauth_client_id === null) : `“${shown?.keyId ?? ''}”`;
  const events: TimelineEvent[] = (shown?.calls ?? []).map((call) => ({
    id: call.id,
    at: new Date(call.created_at),
    lane: call.operation,
    text: `${call.interface.toUpperCase()} ${call.operation}${call.outcome === 'refused' || call.outcome === 'error' ? ` (${call.code})` : ''}, ${call.latency_ms.toFixed(0)} ms`,
    series: call.outcome,
  }));
  const happened = new Set(events.map((event) => event.series));

  return (
    <section aria-labelledby="run-heading">
      <h2 id="run-heading" ref={headingRef} tabIndex={-1}>
        One agent's run
      </h2>
      <form className="row filters" aria-label="Choose the key whose run is shown" onSubmit={(event) => event.preventDefault()}>
        <FormField id="run-key" label="Run of">
          {(control) => (
            <select {...control} value={keyId ?? ''} onChange={(event) => onKeyChange(event.target.value || undefined)}>
              <option value="">Choose a key</option>
              <KeyOptions days={days} />
            </select>
          )}
        </FormField>
      </form>
      <FormError error={error} />
      {!keyId ? (
        <p>Choose a key, or “Show run” on its row above, to see its last 50 calls on a time line.</p>
      ) : shown?.keyId === keyId ? (
        <Timeline
          title={`The last ${shown.calls.length} ${shown.calls.length === 1 ? 'call' : 'calls'} of ${agent}`}
          summary={summaryOf(shown.calls, agent)}
          series={outcomeSeries.filter(({ key }) => happened.has(key))}
          events={events}
          laneHeading="Operation"
        />
      ) : (
        !error && <p role="status">Loading…</p>
      )}
    </section>
  );
}
