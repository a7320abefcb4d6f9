import type { ReactNode } from 'react';
import { AgentName } from '../../lib/agent-name';
import { clientIdHost } from '../../lib/client-id';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { day, when } from '../../lib/format';
import type { ConnectedApp } from './api';
import { budgetSummary } from './key-budget-form';
import { KeyState } from './key-state';

/**
 * Apps connected through OAuth (MCP clients), each by the key its connection holds: the app's name is its own
 * word (marked unverified; numbered when another key had it), the host of a metadata document's address is what
 * identified it; a self-registered app's is its client id.
 */
export function ConnectedAppsTable({ apps, actions }: { apps: ConnectedApp[]; actions: (app: ConnectedApp) => ReactNode }) {
  return (
    <DataTable label="Connected apps" columns={['App', 'Connected by', 'Abilities', 'Last used', 'Expires', 'State', 'Own budget', actionsColumn]}>
      {apps.map((app) => {
        const host = clientIdHost(app.connection.client_id);
        return (
          <tr key={app.id}>
            <th scope="row">
              <AgentName label={app.label} verified={app.label_verified} />
              <span className="hint block">
                {host ? (
                  <code className="client-id" title={app.connection.client_id}>
                    {host}
                  </code>
                ) : (
                  <>
                    Registered itself · <code className="client-id">{app.connection.client_id}</code>
                  </>
                )}
              </span>
            </th>
            <td>
              {app.created_by?.email ?? '—'}
              <span className="hint block">on {day(app.created_at)}</span>
            </td>
            <td>
              {app.access === 'read' ? 'Read only' : 'Read and write'}
              <span className="hint block">{app.abilities.join(', ')}</span>
            </td>
            <td>{when(app.last_used_at, 'Never')}</td>
            <td>{day(app.expires_at, 'Never')}</td>
            <td>
              <KeyState apiKey={app} />
            </td>
            <td>{budgetSummary(app)}</td>
            <td>{actions(app)}</td>
          </tr>
        );
      })}
    </DataTable>
  );
}
