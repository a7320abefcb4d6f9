import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { AgentName } from '../../lib/agent-name';
import { DataTable } from '../../lib/data-table';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { useLatest, useLive, type LiveTopic } from '../../lib/use-live';
import { useDocumentTitle } from '../../lib/use-document-title';
import { ActivityChart } from './activity-chart';
import { agentsApi, type AgentCall, type AgentDay, type CallFilters, type CallOutcome, type Memory, type WaitingTask } from './api';
import { KeyOptions } from './key-options';
import { MemoryItem } from './memory-item';
import { outcomeNames } from './outcomes';
import { RunTimeline } from './run-timeline';

function budgetShare(share: number): string {
  if (share === 0) return '0 %';
  if (share < 0.0001) return '< 0.01 %';
  return `${(share * 100).toFixed(share < 0.01 ? 2 : 0)} %`;
}

/** What a key used of one of its own budgets today: `12 / 20`, and how many were refused past it. */
function used(count: number, limit: number): string {
  return `${Math.min(count, limit)} / ${limit}${count > limit ? ` (${count - limit} refused)` : ''}`;
}

/** The key's own budgets today, one line each; the organization's budget alone when it has none. */
function OwnBudgets({ day }: { day: AgentDay }) {
  if (!day.request_budget && day.write_caps.length === 0) return <span className="hint">None</span>;
  return (
    <ul className="plain-list">
      {day.request_budget && <li>Requests {used(day.request_budget.used, day.request_budget.budget)}</li>}
      {day.write_caps.map((cap) => (
        <li key={cap.operation}>
          <code>{cap.operation}</code> {used(cap.used, cap.cap)}
        </li>
      ))}
    </ul>
  );
}

/** The Agent Command Center: what agents are doing, live, and what they remember. */
export function AgentsPage() {
  useDocumentTitle('Agent Command Center');
  const { can } = useSignedIn();
  const seesMemories = can('seeMemories');
  const [days, setDays] = useState<AgentDay[]>();
  const [calls, setCalls] = useState<AgentCall[]>();
  const [filters, setFilters] = useState<CallFilters>({});
  const [memoryKey, setMemoryKey] = useState<string>();
  const [memories, setMemories] = useState<Memory[]>();
  const [waiting, setWaiting] = useState<WaitingTask[]>();
  const [error, setError] = useState<unknown>();
  // The charts fetch their own figures; this moves when live updates say calls happened.
  const [callsRefreshes, setCallsRefreshes] = useState(0);
  const [runKey, setRunKey] = useState<string>();
  const runHeading = useRef<HTMLHeadingElement>(null);

  const [latestDays, latestWaiting, latestCalls, latestMemories] = [useLatest(), useLatest(), useLatest(), useLatest()];
  const succeeded = useCallback(<T,>(set: (value: T) => void) => (value: T) => {
    set(value);
    setError(undefined);
  }, []);
  const loadDays = useCallback(
    (background = false) => {
      latestDays(agentsApi.days(background), succeeded(setDays), setError);
      latestWaiting(agentsApi.waitingTasks(background), succeeded(setWaiting), setError);
    },
    [latestDays, latestWaiting, succeeded],
  );
  const loadCalls = useCallback(
    (background = false) => latestCalls(agentsApi.calls(filters, background), succeeded(setCalls), setError),
    [filters, latestCalls, succeeded],
  );
  const loadMemories = useCallback(
    (background = false) => {
      if (seesMemories) latestMemories(agentsApi.memories(memoryKey, background), succeeded(setMemories), setError);
    },
    [seesMemories, memoryKey, latestMemories, succeeded],
  );

  useEffect(() => loadDays(), [loadDays]);
  // Until a person chooses, the run shown is that of the busiest key of the day when the page opened.
  const busiest = days?.find((day) => day.calls_today > 0)?.api_key_id;
  const runChosen = useRef(false);
  useEffect(() => {
    if (!runChosen.current && busiest) {
      runChosen.current = true;
      setRunKey(busiest);
    }
  }, [busiest]);
  const chooseRun = useCallback((keyId: string | undefined) => {
    runChosen.current = true;
    setRunKey(keyId);
  }, []);
  useEffect(() => loadCalls(), [loadCalls]);
  useEffect(() => loadMemories(), [loadMemories]);

  // Busy agents change the page every second: what changed is gathered and fetched at most every 1.5 s.
  const changed = useRef(new Set<LiveTopic>());
  const flushTimer = useRef<number | undefined>(undefined);
  const loaders = useRef({ loadDays, loadCalls, loadMemories });
  useEffect(() => {
    loaders.current = { loadDays, loadCalls, loadMemories };
  }, [loadDays, loadCalls, loadMemories]);
  useEffect(() => () => window.clearTimeout(flushTimer.current), []);
  useLive(['calls', 'reviews', 'memories'], (topic: LiveTopic) => {
    changed.current.add(topic);
    flushTimer.current ??= window.setTimeout(() => {
      flushTimer.current = undefined;
      const topics = changed.current;
      changed.current = new Set();
      if (topics.has('calls')) {
        loaders.current.loadCalls(true);
        setCallsRefreshes((count) => count + 1);
      }
      if (topics.has('calls') || topics.has('reviews')) loaders.current.loadDays(true);
      if (topics.has('memories')) loaders.current.loadMemories(true);
    }, 1500);
  });

  const labels = new Map((days ?? []).map((day) => [day.api_key_id, day.label]));
  // A connected app's label is the name it gave itself: marked wherever it is shown.
  const connectedApps = new Set((days ?? []).filter((day) => day.oauth_client_id !== null).map((day) => day.api_key_id));
  const setFilter = (change: Partial<CallFilters>) => setFilters((current) => ({ ...current, ...change }));

  return (
    <>
      <h1>Agent Command Center</h1>
      <p className="lede">What the organization's agents are doing, as it happens, and what they remember.</p>
      <FormError error={error} />

      <section aria-labelledby="agents-heading">
        <h2 id="agents-heading">Agents today</h2>
        <DataTable columns={['Key', 'Calls', 'Applied', 'Held', 'Denied', 'Share of the daily budget', 'Own budgets used today', 'Last used', 'Run']}>
          {(days ?? []).map((day) => (
            <tr key={day.api_key_id} className={day.state === 'active' ? undefined : 'inactive'}>
              <th scope="row">
                <AgentName label={day.label} verified={day.oauth_client_id === null} />
                <span className="hint block">
                  {day.oauth_client_id ? 'Connected app · ' : ''}
                  {day.access === 'read' ? 'Read only' : 'Read and write'}
                  {day.state !== 'active' ? ` · ${day.state}` : ''}
                </span>
              </th>
              <td>{day.calls_today}</td>
              <td>{day.applied_today}</td>
              <td>{day.held_today}</td>
              <td>{day.denied_today}</td>
              <td>{budgetShare(day.budget_share)}</td>
              <td>
                <OwnBudgets day={day} />
              </td>
              <td>{when(day.last_used_at, 'Never')}</td>
              <td>
                <button
                  type="button"
                  className="button secondary small"
                  aria-label={`Show run of ${day.label}`}
                  aria-pressed={day.api_key_id === runKey}
                  onClick={() => {
                    chooseRun(day.api_key_id);
                    runHeading.current?.scrollIntoView({ block: 'start' });
                    runHeading.current?.focus({ preventScroll: true });
                  }}
                >
                  Show run
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      </section>

      <ActivityChart days={days} refreshes={callsRefreshes} />

      <RunTimeline days={days} keyId={runKey} onKeyChange={chooseRun} refreshes={callsRefreshes} headingRef={runHeading} />

      <section aria-labelledby="calls-heading">
        <h2 id="calls-heading">What agents are doing</h2>
        <form className="row filters" aria-label="Filter calls" onSubmit={(event) => event.preventDefault()}>
          <FormField id="calls-key" label="Key">
            {(control) => (
              <select {...control} value={filters.api_key_id ?? ''} onChange={(event) => setFilter({ api_key_id: event.target.value || undefined })}>
                <option value="">Any</option>
                <KeyOptions days={days} />
              </select>
            )}
          </FormField>
          <FormField id="calls-interface" label="Interface">
            {(control) => (
              <select {...control} value={filters.interface ?? ''} onChange={(event) => setFilter({ interface: (event.target.value || undefined) as CallFilters['interface'] })}>
                <option value="">Any</option>
                <option value="rest">REST</option>
                <option value="mcp">MCP</option>
              </select>
            )}
          </FormField>
          <FormField id="calls-outcome" label="Outcome">
            {(control) => (
              <select {...control} value={filters.outcome ?? ''} onChange={(event) => setFilter({ outcome: (event.target.value || undefined) as CallOutcome | undefined })}>
                <option value="">Any</option>
                {Object.entries(outcomeNames).map(([value, name]) => (
                  <option key={value} value={value}>
                    {name}
                  </option>
                ))}
              </select>
            )}
          </FormField>
        </form>
        <DataTable label="Calls, newest first" columns={['When', 'Key', 'Interface', 'Operation', 'Outcome', 'Latency']}>
          {(calls ?? []).map((call) => (
            <tr key={call.id} data-call-id={call.id}>
              <td>{when(call.created_at)}</td>
              <td>{call.api_key_label === null ? 'a person' : <AgentName label={call.api_key_label} verified={!connectedApps.has(call.api_key_id ?? '')} />}</td>
              <td>{call.interface.toUpperCase()}</td>
              <td>
                <code>{call.operation}</code>
              </td>
              <td>
                <span className={`state ${call.outcome === 'ok' || call.outcome === 'applied' ? 'on' : call.outcome === 'held' ? 'waiting' : 'off'}`}>{outcomeNames[call.outcome]}</span>
                {call.outcome === 'refused' || call.outcome === 'error' ? <span className="hint block">{call.code}</span> : null}
              </td>
              <td>{call.latency_ms.toFixed(0)} ms</td>
            </tr>
          ))}
        </DataTable>
        {calls?.length === 0 && <p>No calls match.</p>}
      </section>

      <section aria-labelledby="tasks-heading">
        <h2 id="tasks-heading">MCP tasks waiting on a review</h2>
        {waiting?.length ? (
          <ul className="plain-list">
            {waiting.map((task) => (
              <li key={task.task_id}>
                <code>{task.tool}</code> by <AgentName label={task.api_key_label} verified={!connectedApps.has(task.api_key_id)} quoted />: {task.reason}. <Link to={`/reviews/${task.review_id}`}>Review {task.review_id}</Link>{' '}
                <span className="hint">(expires {when(task.expires_at)})</span>
              </li>
            ))}
          </ul>
        ) : (
          <p>None.</p>
        )}
      </section>

      {seesMemories && (
        <section aria-labelledby="memories-heading">
          <h2 id="memories-heading">What agents remember</h2>
          <FormField id="memories-key" label="Key">
            {(control) => (
              <select {...control} value={memoryKey ?? ''} onChange={(event) => setMemoryKey(event.target.value || undefined)}>
                <option value="">Every key</option>
                <KeyOptions days={days} />
              </select>
            )}
          </FormField>
          {memories?.length ? (
            <ul className="plain-list memories">
              {memories.map((memory) => (
                <MemoryItem
                  key={`${memory.id}:${memory.version}`}
                  memory={memory}
                  label={labels.get(memory.api_key_id) ?? memory.api_key_id}
                  mayChange
                  onChanged={() => loadMemories()}
                />
              ))}
            </ul>
          ) : (
            <p>No memories.</p>
          )}
        </section>
      )}
    </>
  );
}
