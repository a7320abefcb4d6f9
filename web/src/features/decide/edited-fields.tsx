import { EditedFieldsTable } from '../../lib/record-diff';
import type { DecisionLink } from './api';

/** The reviewer's edit held over the agent's write: each field they changed, the agent's value and theirs. */
export function EditedFields({ edit }: { edit: NonNullable<DecisionLink['review']['edit']> }) {
  return (
    <section aria-labelledby="decide-edit">
      <h2 id="decide-edit">Edited by {edit.by}</h2>
      <EditedFieldsTable fields={edit.fields} />
    </section>
  );
}
