import type { DecisionLink } from './api';

/** A value as a person reads it in a table cell. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The reviewer's edit held over the agent's write: each field they changed, the agent's value and theirs. */
export function EditedFields({ edit }: { edit: NonNullable<DecisionLink['review']['edit']> }) {
  return (
    <section aria-labelledby="decide-edit">
      <h2 id="decide-edit">Edited by {edit.by}</h2>
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
          {edit.fields.map(({ field, agent, edited }) => (
            <tr key={field} className="changed">
              <th scope="row">{field}</th>
              <td>{shown(agent)}</td>
              <td>{shown(edited)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
