import type { ReactNode } from 'react';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { day, when } from '../../lib/format';
import type { ApiKey } from './api';
import { budgetSummary } from './key-budget-form';
import { KeyState } from './key-state';

/** The organization's own keys, made here or by the command line; a row's buttons are the page's. */
export function KeysTable({ keys, actions }: { keys: ApiKey[]; actions: (key: ApiKey) => ReactNode }) {
  return (
    <DataTable label="API keys" columns={['Label', 'Access', 'Created', 'Last used', 'Expires', 'State', 'Own budget', actionsColumn]}>
      {keys.map((key) => (
        <tr key={key.id}>
          <th scope="row">
            {key.label}
            <span className="hint block">
              <code>{key.id}</code> · {key.abilities.length} abilities
            </span>
          </th>
          <td>{key.access === 'read' ? 'Read only' : 'Read and write'}</td>
          <td>
            {day(key.created_at)}
            <span className="hint block">by {key.created_by?.email ?? 'the command line'}</span>
          </td>
          <td>{when(key.last_used_at, 'Never')}</td>
          <td>{day(key.expires_at, 'Never')}</td>
          <td>
            <KeyState apiKey={key} />
          </td>
          <td>{budgetSummary(key)}</td>
          <td>{actions(key)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
