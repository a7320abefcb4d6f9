import { AxisBottom, AxisLeft } from '@visx/axis';
import { Group } from '@visx/group';
import { useParentSize } from '@visx/responsive';
import { scaleBand, scaleLinear } from '@visx/scale';
import { Bar } from '@visx/shape';
import { ChartFigure, tickLabel, type Series } from './chart-figure';

/** One bar (a day, an hour, a key, a rule): its label and a value for each series, stacked in the series' order. */
export interface BarGroup {
  /** A stable key; the label when omitted. */
  key?: string;
  label: string;
  values: Record<string, number>;
}

const margin = { top: 8, right: 12, bottom: 28, left: 40 };

/**
 * Bars of stacked series: upright over time (days, hours), or lying down by name (`horizontal`: keys, rules), with
 * the figures as a table beside them for screen readers and for anyone who would rather read.
 */
export function BarChart({
  title,
  summary,
  series,
  groups,
  horizontal = false,
  height,
  groupHeading = horizontal ? 'Name' : 'When',
  totalHeading,
}: {
  title: string;
  /** The chart in one or two sentences: what a person would say looking at it. */
  summary: string;
  series: Series[];
  groups: BarGroup[];
  horizontal?: boolean;
  height?: number;
  /** The table's first column heading. */
  groupHeading?: string;
  /** When set, the table ends with each bar's total under this heading. */
  totalHeading?: string;
}) {
  const { parentRef, width } = useParentSize({ debounceTime: 50, initialSize: { width: 0 } });
  // Drawn once its box is measured: a guessed width would stick out of a phone's page until then.
  const shownHeight = height ?? (horizontal ? Math.max(80, groups.length * 28 + margin.top + margin.bottom) : 200);
  const totals = groups.map((group) => series.reduce((sum, { key }) => sum + (group.values[key] ?? 0), 0));
  const top = Math.max(1, ...totals);
  const left = horizontal ? Math.min(180, Math.max(60, ...groups.map((group) => group.label.length * 7))) : margin.left;
  const inner = { width: Math.max(0, width - left - margin.right), height: Math.max(0, shownHeight - margin.top - margin.bottom) };
  const names = groups.map((group) => group.key ?? group.label);
  const labelOf = new Map(groups.map((group) => [group.key ?? group.label, group.label]));
  const band = scaleBand<string>({ domain: names, range: horizontal ? [0, inner.height] : [0, inner.width], padding: 0.25 });
  const value = scaleLinear<number>({ domain: [0, top], range: horizontal ? [0, inner.width] : [inner.height, 0], nice: true });
  const ticks = Math.min(5, top);
  // Upright bars are named as often as their labels fit (24 hours on a phone: every fourth); the table names them all.
  const labelWidth = Math.max(1, ...groups.map((group) => group.label.length)) * 7 + 10;
  const every = Math.max(1, Math.ceil(groups.length / Math.max(1, Math.floor(inner.width / labelWidth))));
  const namedBars = names.filter((_, index) => index % every === 0);

  return (
    <ChartFigure
      title={title}
      summary={summary}
      series={series}
      table={{
        columns: [groupHeading, ...series.map(({ name }) => name), ...(totalHeading ? [totalHeading] : [])],
        rows: groups.map((group, index) => ({
          key: names[index]!,
          cells: [group.label, ...series.map(({ key }) => group.values[key] ?? 0), ...(totalHeading ? [totals[index]!] : [])],
        })),
      }}
    >
      <div ref={parentRef} className="chart-canvas">
        {width > 0 && (
        <svg width={width} height={shownHeight} aria-hidden="true" focusable="false">
          <Group left={left} top={margin.top}>
            {groups.map((group, index) => {
              const name = names[index]!;
              let stacked = 0;
              return (
                <g key={name} data-group={group.label} data-key={name} data-total={totals[index]}>
                  {series.map(({ key, tone }) => {
                    const amount = group.values[key] ?? 0;
                    if (amount <= 0) return null;
                    const from = stacked;
                    stacked += amount;
                    return horizontal ? (
                      <Bar key={key} className={`chart-${tone}`} data-series={key} data-value={amount} x={value(from)} y={band(name)} width={value(stacked) - value(from)} height={band.bandwidth()} />
                    ) : (
                      <Bar key={key} className={`chart-${tone}`} data-series={key} data-value={amount} x={band(name)} y={value(stacked)} width={band.bandwidth()} height={value(from) - value(stacked)} />
                    );
                  })}
                </g>
              );
            })}
            {horizontal ? (
              <>
                <AxisLeft scale={band} tickFormat={(name) => labelOf.get(name) ?? name} hideTicks tickLabelProps={tickLabel('end')} />
                <AxisBottom top={inner.height} scale={value} numTicks={ticks} tickFormat={(count) => String(count)} tickLabelProps={tickLabel('middle')} />
              </>
            ) : (
              <>
                <AxisLeft scale={value} numTicks={ticks} tickFormat={(count) => String(count)} tickLabelProps={tickLabel('end')} />
                <AxisBottom top={inner.height} scale={band} tickValues={namedBars} tickFormat={(name) => labelOf.get(name) ?? name} hideTicks tickLabelProps={tickLabel('middle')} />
              </>
            )}
          </Group>
        </svg>
        )}
      </div>
    </ChartFigure>
  );
}
