// The diff of a held write's record, as the review queue and a decision link's page show it.

/** A value as a person reads it in a table cell. */
export function shown(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Fields a person never needs on a card: the organization's own id. */
const noise = new Set(['org_id']);

/** Fields folded away under a summary ("11 unchanged fields"), open on request. */
function Folded({ summary, caption, fields, value }: { summary: string; caption: string; fields: string[]; value: (field: string) => string }) {
  if (fields.length === 0) return null;
  return (
    <details className="folded-fields">
      <summary>{summary}</summary>
      <table className="record">
        <caption className="visually-hidden">{caption}</caption>
        <tbody>
          {fields.map((field) => (
            <tr key={field}>
              <th scope="row">{field}</th>
              <td>{value(field)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

/**
 * Where a field stands in a table: the record's id and its title or name first, the bookkeeping last, the others as
 * the record has them (a record kept as JSON has its keys in no order a person would choose).
 */
const rank = (field: string) => (field === 'id' ? 0 : field === 'title' || field === 'name' ? 1 : ['version', 'created_at', 'updated_at'].includes(field) ? 3 : 2);
const inReadingOrder = (fields: string[]) => fields.map((field, at) => ({ field, at })).sort((a, b) => rank(a.field) - rank(b.field) || a.at - b.at).map(({ field }) => field);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The record as it would be written, the change first. An update: the fields it changes, before and after, and the
 * unchanged ones folded. A create: the fields it was `given` (when known), the rest (defaults, id, timestamps)
 * folded. A delete: the record. `shownAs` puts a field's value in words (a changeset's reference to a record an
 * earlier item makes), where it stands after the write and, unchanged, before it.
 */
export function RecordDiff({
  before,
  after,
  deleting,
  given,
  shownAs = {},
}: {
  before: Record<string, unknown> | null;
  after: Record<string, unknown>;
  deleting: boolean;
  /** For a create: the fields the write was given; the others are folded. Undefined: show every field. */
  given?: readonly string[];
  shownAs?: Record<string, string>;
}) {
  const changed = (field: string) => before !== null && !deleting && JSON.stringify(before[field]) !== JSON.stringify(after[field]);
  const afterCell = (field: string) => shownAs[field] ?? shown(after[field]);
  const beforeCell = (field: string): string => (field in shownAs && JSON.stringify(before?.[field]) === JSON.stringify(after[field]) ? shownAs[field]! : shown(before?.[field]));
  const all = inReadingOrder([...new Set([...Object.keys(before ?? {}), ...Object.keys(after)])].filter((field) => !noise.has(field)));
  if (!before) {
    const givenFields = given ? all.filter((field) => given.includes(field)) : all;
    const rest = given ? all.filter((field) => !given.includes(field)) : [];
    return (
      <>
        {given && <p className="hint">Creates a record with {plural(givenFields.length, 'field')} given: {givenFields.join(', ') || 'none'}.</p>}
        <table className="record">
          <caption className="visually-hidden">{given ? 'The fields the write gives' : 'The record as it would be written'}</caption>
          <tbody>
            {givenFields.map((field) => (
              <tr key={field} data-given={given ? 'true' : undefined}>
                <th scope="row">{field}</th>
                <td>{afterCell(field)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <Folded summary={`${plural(rest.length, 'other field')}: defaults, id and times`} caption="The fields the write leaves to their defaults" fields={rest} value={afterCell} />
      </>
    );
  }
  if (deleting) {
    return (
      <>
        <p className="hint">Deletes this record:</p>
        <table className="record diff">
          <caption className="visually-hidden">The record to be deleted</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {all.map((field) => (
              <tr key={field}>
                <th scope="row">{field}</th>
                <td>{beforeCell(field)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </>
    );
  }
  const changedFields = all.filter(changed);
  const unchanged = all.filter((field) => !changed(field));
  return (
    <>
      <p className="hint">
        Changes {plural(changedFields.length, 'field')}: {changedFields.join(', ') || 'none'}.
      </p>
      {changedFields.length > 0 && (
        <table className="record diff">
          <caption className="visually-hidden">The fields the write changes, before and after</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {changedFields.map((field) => (
              <tr key={field} className="changed" data-changed="true">
                <th scope="row">
                  {field}
                  <span className="visually-hidden"> (changed)</span>
                </th>
                <td>{beforeCell(field)}</td>
                <td>{afterCell(field)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Folded summary={plural(unchanged.length, 'unchanged field')} caption="The fields the write leaves as they are" fields={unchanged} value={beforeCell} />
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
