import { useId, type ReactNode } from 'react';

/** The colours a series may take, as classes in styles.css (each with a border, so two tones never rely on hue alone). */
export type Tone = 'ok' | 'waiting' | 'off' | 'neutral' | 'accent' | 'dark';

/** One series of a chart (allowed, held, denied…): its key in the data, its name in words, its tone. */
export interface Series {
  key: string;
  name: string;
  tone: Tone;
}

/** A chart's figures as a table: its column headings, and each row's cells, the first naming the row. */
export interface FiguresTable {
  columns: string[];
  rows: { key: string; cells: (string | number)[] }[];
}

/** How axis labels are drawn: the page's type, in the muted ink (a class, as the content security policy wants). */
export const tickLabel = (textAnchor: 'start' | 'middle' | 'end') => () => ({ className: 'chart-tick', textAnchor, fontSize: 12 });

/**
 * A chart as a figure: its title, a sentence that says what it shows (the picture's name for screen readers), a
 * legend, the picture (hidden from screen readers), and the same figures as a table a click away.
 */
export function ChartFigure({
  title,
  summary,
  series,
  table,
  children,
}: {
  title: string;
  summary: string;
  series: Series[];
  /** The figures: the columns' headings, and each row's cells (the first one names the row). */
  table: FiguresTable;
  children: ReactNode;
}) {
  const id = useId();
  return (
    <figure className="chart" aria-labelledby={`${id}-title`} aria-describedby={`${id}-summary`}>
      <figcaption>
        <span id={`${id}-title`} className="chart-title">
          {title}
        </span>
        <span id={`${id}-summary`} className="hint block">
          {summary}
        </span>
      </figcaption>
      {series.length > 1 && (
        <ul className="chart-legend" aria-label={`${title}: legend`}>
          {series.map(({ key, name, tone }) => (
            <li key={key}>
              <span className={`chart-swatch chart-${tone}`} aria-hidden="true" />
              {name}
            </li>
          ))}
        </ul>
      )}
      {children}
      <details className="chart-table">
        <summary>The figures as a table</summary>
        {/* Focusable, so that a table wider than its card can be scrolled from the keyboard too. */}
        <div className="table-scroll" tabIndex={0} role="region" aria-label={`${title}: the figures`}>
          <table>
            <caption className="visually-hidden">{title}</caption>
            <thead>
              <tr>
                {table.columns.map((column) => (
                  <th scope="col" key={column}>
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {table.rows.map(({ key, cells: [first, ...rest] }) => (
                <tr key={key}>
                  <th scope="row">{first}</th>
                  {rest.map((cell, index) => (
                    <td key={index}>{cell}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
