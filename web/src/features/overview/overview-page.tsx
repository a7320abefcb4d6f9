import { useCallback, useEffect, useRef, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { roleNames } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { useLatest, useLive } from '../../lib/use-live';
import { useDocumentTitle } from '../../lib/use-document-title';
import { AboutYou } from './about-you';
import { overviewApi, type Overview } from './api';
import { QueueFigures, TodayFigures } from './figures';
import { NeedsAPerson } from './needs-a-person';
import { BusiestAgentsChart, DecisionsChart } from './overview-charts';
import './overview.css';

/** Busy agents change the figures every second: changes are gathered and fetched at most this often. */
const gatherChangesMs = 1500;
/** Some figures move with the clock alone (how long the oldest waited, what expires within a day, the day itself). */
const refreshEveryMs = 60_000;

/** The overview: what waits for people, what agents did today and this week, and what needs a person; live. */
export function OverviewPage() {
  useDocumentTitle('Overview');
  const { person, organization } = useSignedIn();
  const [overview, setOverview] = useState<Overview>();
  const [now, setNow] = useState(() => Date.now());
  const [error, setError] = useState<unknown>();
  const latest = useLatest();

  const load = useCallback(
    (background = false) =>
      latest(
        overviewApi.get(background),
        (answer) => {
          setOverview(answer);
          setNow(Date.now());
          setError(undefined);
        },
        setError,
      ),
    [latest],
  );
  useEffect(() => load(), [load]);
  useEffect(() => {
    const timer = window.setInterval(() => load(true), refreshEveryMs);
    return () => window.clearInterval(timer);
  }, [load]);

  const gathering = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(gathering.current), []);
  useLive(['reviews', 'calls'], () => {
    gathering.current ??= window.setTimeout(() => {
      gathering.current = undefined;
      load(true);
    }, gatherChangesMs);
  });

  return (
    <>
      <h1>{organization.name}</h1>
      <p className="lede">
        Organization <code>{organization.slug}</code>. You are signed in as {person.email}, {roleNames[person.role].toLowerCase()}.
      </p>
      <FormError error={error} />
      {overview ? (
        <div className="overview" data-date={overview.date}>
          <div className="overview-figures">
            <QueueFigures queue={overview.queue} now={now} />
            <TodayFigures overview={overview} />
          </div>
          <NeedsAPerson overview={overview} />
          <div className="overview-charts">
            <section className="card" aria-label="Decisions, last 7 days">
              <DecisionsChart days={overview.decisions_by_day} />
            </section>
            <section className="card" aria-label="Busiest agents today">
              <BusiestAgentsChart agents={overview.busiest_agents} />
            </section>
          </div>
        </div>
      ) : (
        !error && <p role="status">Loading the overview…</p>
      )}
      <AboutYou />
    </>
  );
}
