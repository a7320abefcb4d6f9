import { BarChart, type Series } from '../../lib/charts';
import type { Overview } from './api';

const decisionSeries: Series[] = [
  { key: 'allow', name: 'Allowed', tone: 'ok' },
  { key: 'review', name: 'Held for review', tone: 'waiting' },
  { key: 'deny', name: 'Denied', tone: 'off' },
];
/** Shown only in a week that had any: writes that would have been held, refused because the queue was full. */
const refusedSeries: Series = { key: 'refused', name: 'Refused, queue full', tone: 'neutral' };

const agentSeries: Series[] = [
  { key: 'other', name: 'Other calls', tone: 'accent' },
  { key: 'held', name: 'Writes held', tone: 'waiting' },
  { key: 'denied', name: 'Writes denied', tone: 'off' },
];

// The days are the organization's local dates (YYYY-MM-DD): named as dates, never moved into the browser's zone.
const weekday = new Intl.DateTimeFormat(undefined, { weekday: 'short', timeZone: 'UTC' });
const fullDate = new Intl.DateTimeFormat(undefined, { weekday: 'long', month: 'long', day: 'numeric', timeZone: 'UTC' });
const dayOf = (date: string) => new Date(`${date}T00:00:00Z`);

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The gated writes of the last 7 days, a bar a day stacked by decision. */
export function DecisionsChart({ days }: { days: Overview['decisions_by_day'] }) {
  const totals = days.map((day) => day.allow + day.review + day.deny + day.refused);
  const sum = (key: 'allow' | 'review' | 'deny' | 'refused') => days.reduce((total, day) => total + day[key], 0);
  const refused = sum('refused');
  const all = totals.reduce((total, count) => total + count, 0);
  const busiest = totals.indexOf(Math.max(...totals));
  const summary = all
    ? `${plural(all, 'gated write')} in the last 7 days: ${sum('allow')} allowed, ${sum('review')} held for review, ${sum('deny')} denied${refused ? `, ${refused} refused because the review queue was full` : ''}. ` +
      `The busiest day was ${fullDate.format(dayOf(days[busiest]!.date))}, with ${totals[busiest]}.`
    : 'No gated writes in the last 7 days.';
  return (
    <BarChart
      title="Decisions, last 7 days"
      summary={summary}
      series={refused ? [...decisionSeries, refusedSeries] : decisionSeries}
      groupHeading="Day"
      totalHeading="Gated writes"
      groups={days.map((day, index) => ({
        key: day.date,
        label: index === days.length - 1 ? 'Today' : weekday.format(dayOf(day.date)),
        values: { allow: day.allow, review: day.review, deny: day.deny, refused: day.refused },
      }))}
    />
  );
}

/** The keys with the most calls today, each bar its calls, its held and denied writes marked. */
export function BusiestAgentsChart({ agents }: { agents: Overview['busiest_agents'] }) {
  if (!agents.length) {
    return (
      <figure className="chart">
        <figcaption>
          <span className="chart-title">Busiest agents today</span>
          <span className="hint block">No agent has called the API today.</span>
        </figcaption>
      </figure>
    );
  }
  const [top] = agents;
  // A connected app's own name is marked, as everywhere.
  const nameOf = (agent: (typeof agents)[number]) => (agent.label_verified ? agent.label : `${agent.label} (unverified app name)`);
  const summary =
    `${nameOf(top!)} made the most calls today: ${top!.calls} (${top!.held} held, ${top!.denied} denied).` +
    (agents.length > 1 ? ` Then ${agents.slice(1).map((agent) => `${nameOf(agent)} ${agent.calls}`).join(', ')}.` : '');
  return (
    <BarChart
      title="Busiest agents today"
      summary={summary}
      series={agentSeries}
      horizontal
      groupHeading="Key"
      totalHeading="Calls"
      groups={agents.map((agent) => ({
        key: agent.api_key_id,
        label: nameOf(agent),
        values: { other: agent.calls - agent.held - agent.denied, held: agent.held, denied: agent.denied },
      }))}
    />
  );
}
