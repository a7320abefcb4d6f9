import { Fragment, useRef, useState } from 'react';
import { ConfirmButton } from '../../lib/confirm-button';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { day } from '../../lib/format';
import type { WebhookEndpoint } from './api';

export interface EndpointActions {
  /** The endpoint whose delivery log is open, if any. */
  openLog: string | undefined;
  toggleLog(endpoint: WebhookEndpoint): void;
  setEnabled(endpoint: WebhookEndpoint, enabled: boolean): Promise<void>;
  remove(endpoint: WebhookEndpoint): Promise<void>;
}

/** The organization's endpoints: where, what for, which events, whether on (and why not), and what can be done to each. */
export function EndpointsTable(props: {
  endpoints: WebhookEndpoint[];
  actions: EndpointActions;
  /** Told of each row's delivery-log button, for the focus to come back to it when the log closes. */
  rememberLogButton: (id: string, button: HTMLButtonElement | null) => void;
}) {
  const { endpoints, actions, rememberLogButton } = props;
  const [confirming, setConfirming] = useState<string>();
  // Not disabled while it saves: a disabled button drops the keyboard's focus.
  const busy = useRef(false);

  async function once(work: () => Promise<void>) {
    if (busy.current) return;
    busy.current = true;
    try {
      await work();
    } finally {
      busy.current = false;
    }
  }

  return (
    <DataTable label="Webhook endpoints" columns={['Endpoint', 'Event types', 'State', 'Failed in a row', 'Added', actionsColumn]}>
      {endpoints.map((endpoint) => (
        <tr key={endpoint.id} className={endpoint.enabled ? undefined : 'inactive'}>
          <th scope="row">
            {endpoint.url}
            <span className="hint block">
              {endpoint.description && <>{endpoint.description} · </>}
              <code>{endpoint.id}</code>
            </span>
          </th>
          <td>
            {endpoint.event_types.map((type, index) => (
              <Fragment key={type}>
                {index > 0 && <br />}
                <code>{type}</code>
              </Fragment>
            ))}
          </td>
          <td>
            <span className={`state ${endpoint.enabled ? 'on' : 'off'}`}>{endpoint.enabled ? 'On' : 'Off'}</span>
            {!endpoint.enabled && <span className="hint block">{endpoint.disabled_reason ?? 'Switched off'}</span>}
          </td>
          <td>{endpoint.failure_streak}</td>
          <td>{day(endpoint.created_at)}</td>
          <td>
            <div className="action-buttons">
              <button
                type="button"
                className="button secondary small"
                ref={(button) => rememberLogButton(endpoint.id, button)}
                aria-expanded={actions.openLog === endpoint.id}
                aria-controls={actions.openLog === endpoint.id ? 'delivery-log' : undefined}
                aria-label={`Delivery log of ${endpoint.url}`}
                onClick={() => actions.toggleLog(endpoint)}
              >
                Delivery log
              </button>
              <button
                type="button"
                className="button secondary small"
                aria-label={`${endpoint.enabled ? 'Switch off' : 'Switch on'} ${endpoint.url}`}
                onClick={() => void once(() => actions.setEnabled(endpoint, !endpoint.enabled))}
              >
                {endpoint.enabled ? 'Switch off' : 'Switch on'}
              </button>
              <ConfirmButton
                label="Delete"
                accessibleLabel={`Delete ${endpoint.url}`}
                confirmLabel="Delete it and its log"
                open={confirming === endpoint.id}
                onOpen={() => setConfirming(endpoint.id)}
                onCancel={() => setConfirming(undefined)}
                onConfirm={() => void once(() => actions.remove(endpoint))}
              />
            </div>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
