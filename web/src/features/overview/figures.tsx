import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { AgentName } from '../../lib/agent-name';
import { when } from '../../lib/format';
import type { Overview } from './api';

/** How long since an instant, as a person says it: 40 s, 12 min, 3 h, 2 days. */
export function timeSince(iso: string, now: number): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} days`;
}

/** One figure: a name, a big number and a line that says more (or where to go). */
function Figure({ name, label, value, tone, children }: { name: string; label: string; value: ReactNode; tone?: 'ok' | 'waiting' | 'off'; children?: ReactNode }) {
  return (
    <div className={`figure${tone ? ` figure-${tone}` : ''}`} data-figure={name}>
      <dt>{label}</dt>
      <dd>
        <span className="figure-value">{value}</span>
        {children && <span className="figure-detail">{children}</span>}
      </dd>
    </div>
  );
}

/** The review queue now: how many wait, the oldest, what expires within a day, what waited past its escalation. */
export function QueueFigures({ queue, now }: { queue: Overview['queue']; now: number }) {
  const { pending, oldest, next_to_expire: next } = queue;
  return (
    <section className="overview-group" aria-labelledby="queue-heading">
      <h2 id="queue-heading">Review queue</h2>
      <dl className="figures">
        <Figure name="pending" label="Waiting now" value={pending} tone={pending ? 'waiting' : 'ok'}>
          {pending ? <Link to="/reviews">Open the queue</Link> : 'Nothing waits for a person'}
        </Figure>
        <Figure name="oldest" label="Oldest waiting" value={oldest ? timeSince(oldest.held_at, now) : '—'}>
          {oldest ? (
            <Link to={`/reviews/${encodeURIComponent(oldest.review_id)}`}>
              <code>{oldest.operation}</code> by <AgentName label={oldest.api_key_label} verified={oldest.api_key_label_verified} />
            </Link>
          ) : (
            'None'
          )}
        </Figure>
        <Figure name="expiring" label="Expiring within a day" value={queue.expiring_within_a_day} tone={queue.expiring_within_a_day ? 'waiting' : undefined}>
          {next ? `Next: ${when(next.expires_at)}` : 'None'}
        </Figure>
        <Figure name="escalated" label="Escalated" value={queue.escalated} tone={queue.escalated ? 'off' : undefined}>
          {queue.escalated ? 'Waited past the escalation wait' : 'None waited too long'}
        </Figure>
      </dl>
    </section>
  );
}

/** The organization's day so far: the agents' calls and their gated writes by decision. */
export function TodayFigures({ overview }: { overview: Overview }) {
  const { calls, writes } = overview.today;
  return (
    <section className="overview-group" aria-labelledby="today-heading">
      <h2 id="today-heading">
        Today <span className="hint">in {overview.timezone}</span>
      </h2>
      <dl className="figures">
        <Figure name="calls" label="API calls" value={calls}>
          <Link to="/agents">REST and MCP, by every key</Link>
        </Figure>
        <Figure name="allowed" label="Writes allowed" value={writes.allow} tone={writes.allow ? 'ok' : undefined}>
          Applied without waiting
        </Figure>
        <Figure name="held" label="Writes held" value={writes.review} tone={writes.review ? 'waiting' : undefined}>
          Held for a person{writes.refused ? `; ${writes.refused} more refused, the queue was full` : ''}
        </Figure>
        <Figure name="denied" label="Writes denied" value={writes.deny} tone={writes.deny ? 'off' : undefined}>
          Refused by the policy
        </Figure>
      </dl>
    </section>
  );
}
