import { AxisBottom, AxisLeft } from '@visx/axis';
import { Group } from '@visx/group';
import { useParentSize } from '@visx/responsive';
import { scaleBand, scaleTime } from '@visx/scale';
import { ChartFigure, tickLabel, type Series } from './chart-figure';

/** One thing that happened: when, on which lane (an operation, a key), what it was in words, and its series. */
export interface TimelineEvent {
  id: string;
  at: Date;
  lane: string;
  /** The event in words, as the table shows it (the picture shows it as a mark). */
  text: string;
  series: string;
}

const margin = { top: 8, right: 16, bottom: 28 };
const laneHeight = 26;

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/**
 * Events on a time line, one lane each (a run of an agent's calls, lane by operation), marked by series; the events
 * as a table for screen readers and for reading.
 */
export function Timeline({
  title,
  summary,
  series,
  events,
  laneHeading = 'Lane',
}: {
  title: string;
  summary: string;
  series: Series[];
  events: TimelineEvent[];
  laneHeading?: string;
}) {
  const { parentRef, width } = useParentSize({ debounceTime: 50, initialSize: { width: 0 } });
  // Drawn once its box is measured: a guessed width would stick out of a phone's page until then.
  const lanes = [...new Set(events.map((event) => event.lane))];
  const left = Math.min(180, Math.max(60, ...lanes.map((lane) => lane.length * 7)));
  const height = lanes.length * laneHeight + margin.top + margin.bottom;
  const innerWidth = Math.max(0, width - left - margin.right);
  const times = events.map((event) => event.at.getTime());
  const first = Math.min(...times);
  const last = Math.max(...times);
  // A run of one instant still gets a line: a minute either side.
  const pad = first === last ? 60_000 : (last - first) * 0.03;
  const time = scaleTime<number>({ domain: [new Date(first - pad), new Date(last + pad)], range: [0, innerWidth] });
  const lane = scaleBand<string>({ domain: lanes, range: [0, lanes.length * laneHeight], padding: 0.3 });
  const toneOf = new Map(series.map(({ key, tone }) => [key, tone]));
  const nameOf = new Map(series.map(({ key, name }) => [key, name]));

  return (
    <ChartFigure
      title={title}
      summary={summary}
      series={series}
      table={{
        columns: ['When', laneHeading, 'What', 'Outcome'],
        rows: events.map((event) => ({ key: event.id, cells: [clock.format(event.at), event.lane, event.text, nameOf.get(event.series) ?? event.series] })),
      }}
    >
      <div ref={parentRef} className="chart-canvas">
        {events.length > 0 && width > 0 && (
          <svg width={width} height={height} aria-hidden="true" focusable="false">
            <Group left={left} top={margin.top}>
              {lanes.map((name) => (
                <line key={name} className="chart-lane" x1={0} x2={innerWidth} y1={(lane(name) ?? 0) + lane.bandwidth() / 2} y2={(lane(name) ?? 0) + lane.bandwidth() / 2} />
              ))}
              {events.map((event) => (
                <rect
                  key={event.id}
                  className={`chart-${toneOf.get(event.series) ?? 'neutral'}`}
                  data-event={event.id}
                  data-series={event.series}
                  x={time(event.at) - 4}
                  y={lane(event.lane)}
                  width={8}
                  height={lane.bandwidth()}
                  rx={2}
                />
              ))}
              <AxisLeft scale={lane} hideTicks tickLabelProps={tickLabel('end')} />
              <AxisBottom top={lanes.length * laneHeight} scale={time} numTicks={Math.max(2, Math.floor(innerWidth / 110))} tickLabelProps={tickLabel('middle')} />
            </Group>
          </svg>
        )}
      </div>
    </ChartFigure>
  );
}
