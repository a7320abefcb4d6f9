import type { ReactNode } from 'react';

/** A column's heading; a hidden one is read by screen readers only (the column of a row's buttons). */
export type Column = string | { hidden: string };

export const actionsColumn: Column = { hidden: 'Actions' };

/**
 * A table of records, scrolling sideways on a narrow screen: one heading a column, each row given by the page
 * (its first cell a `<th scope="row">` where the row names a record).
 */
export function DataTable({
  columns,
  label,
  scrollsFromKeyboard = false,
  children,
}: {
  columns: readonly Column[];
  label?: string;
  /** For a wide table of text alone (no link or button to tab to): its scrolling box takes the keyboard's focus. */
  scrollsFromKeyboard?: boolean;
  children: ReactNode;
}) {
  const scrolling = scrollsFromKeyboard ? { tabIndex: 0, role: 'region', 'aria-label': label } : {};
  return (
    <div className="table-scroll" {...scrolling}>
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
