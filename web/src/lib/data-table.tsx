import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';

/** A column's heading; a hidden one is read by screen readers only (the column of a row's buttons). */
export type Column = string | { hidden: string };

export const actionsColumn: Column = { hidden: 'Actions' };

/**
 * A table of records, scrolling sideways on a narrow screen: one heading a column, each row given by the page
 * (its first cell a `<th scope="row">` where the row names a record). While it scrolls, the scrolling box is a
 * named region that takes the keyboard's focus, so arrow keys scroll it.
 */
export function DataTable({ columns, label, children }: { columns: readonly Column[]; label?: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const scrolls = useScrolls(box);
  const named = label ?? columns.find((column): column is string => typeof column === 'string');
  return (
    <div className="table-scroll" ref={box} {...(scrolls ? { tabIndex: 0, role: 'region', 'aria-label': `${named ?? 'Table'} (scrolls sideways)` } : {})}>
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <th key={column.hidden} scope="col">
                  <span className="visually-hidden">{column.hidden}</span>
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** Whether the box is narrower than what it holds, as the window and the content change. */
function useScrolls(box: RefObject<HTMLElement | null>): boolean {
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth + 1);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    measure();
    return () => observer.disconnect();
  }, [box]);
  return scrolls;
}
