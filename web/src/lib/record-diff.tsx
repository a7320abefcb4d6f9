// The diff of a held write's record, as the review queue and a decision link's page show it.

/** A value as a person reads it in a table cell. */
export function shown(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * The record as it would be written: every field, and for updates and deletes what it was before. With
 * `changedFirst`, the fields the write changes come first (where a person on a phone looks first). `shownAs` puts
 * a field's value in words (a changeset's reference to a record an earlier item makes), where it stands after the
 * write and, unchanged, before it.
 */
export function RecordDiff({
  before,
  after,
  deleting,
  changedFirst = false,
  shownAs = {},
}: {
  before: Record<string, unknown> | null;
  after: Record<string, unknown>;
  deleting: boolean;
  changedFirst?: boolean;
  shownAs?: Record<string, string>;
}) {
  const changed = (field: string) => before !== null && !deleting && JSON.stringify(before[field]) !== JSON.stringify(after[field]);
  const afterCell = (field: string) => shownAs[field] ?? shown(after[field]);
  const beforeCell = (field: string) => (field in shownAs && JSON.stringify(before?.[field]) === JSON.stringify(after[field]) ? shownAs[field] : shown(before?.[field]));
  const all = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after)])].filter((field) => !['org_id'].includes(field));
  const fields = changedFirst ? [...all.filter(changed), ...all.filter((field) => !changed(field))] : all;
  if (!before) {
    return (
      <table className="record">
        <caption className="visually-hidden">The record as it would be written</caption>
        <tbody>
          {fields.map((field) => (
            <tr key={field}>
              <th scope="row">{field}</th>
              <td>{afterCell(field)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  const changedFields = fields.filter(changed);
  return (
    <>
      {deleting ? (
        <p className="hint">Deletes this record:</p>
      ) : (
        <p className="hint">
          Changes {changedFields.length} field{changedFields.length === 1 ? '' : 's'}: {changedFields.join(', ') || 'none'}.
        </p>
      )}
      <table className="record diff">
        <caption className="visually-hidden">{deleting ? 'The record to be deleted' : 'The record before and after the write'}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            {!deleting && <th scope="col">After</th>}
          </tr>
        </thead>
        <tbody>
          {fields.map((field) => (
            <tr key={field} className={changed(field) ? 'changed' : undefined} data-changed={changed(field) ? 'true' : undefined}>
              <th scope="row">
                {field}
                {changed(field) && <span className="visually-hidden"> (changed)</span>}
              </th>
              <td>{beforeCell(field)}</td>
              {!deleting && <td>{afterCell(field)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** A reviewer's edit as a table: each field they changed, the agent's value and theirs. */
export function EditedFieldsTable({ fields }: { fields: { field: string; agent: unknown; edited: unknown }[] }) {
  return (
    <table className="record diff">
      <caption className="visually-hidden">The fields the reviewer changed: the agent's value and the edited value</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Agent's value</th>
          <th scope="col">Edited value</th>
        </tr>
      </thead>
      <tbody>
        {fields.map(({ field, agent, edited }) => (
          <tr key={field} className="changed" data-edited="true">
            <th scope="row">{field}</th>
            <td>{shown(agent)}</td>
            <td>{shown(edited)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
