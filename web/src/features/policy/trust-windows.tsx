import { useEffect, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { trustMatchText, when } from '../../lib/format';
import { policyApi, type TrustWindow } from './api';

/**
 * The open trust windows: which key may make which writes without review, matching what, how many uses are left
 * and until when, who opened each from which review. Owners, admins and the person who opened one close it now.
 */
export function TrustWindows({ personId, canCloseAny }: { personId: string; canCloseAny: boolean }) {
  const [windows, setWindows] = useState<TrustWindow[]>();
  const [loadError, setLoadError] = useState<unknown>();
  const [closeError, setCloseError] = useState<unknown>();
  const [closing, setClosing] = useState<string>();
  const [status, setStatus] = useState<string>();

  useEffect(() => {
    policyApi.trustWindows().then(setWindows, setLoadError);
  }, []);

  async function close(window: TrustWindow) {
    setClosing(window.id);
    setCloseError(undefined);
    try {
      await policyApi.closeTrustWindow(window.id);
      setWindows((known) => known?.filter((candidate) => candidate.id !== window.id));
      setStatus(`Closed the trust window for “${window.api_key.label}” (${window.operation}): its next such write is held for review.`);
    } catch (failure) {
      setCloseError(failure);
    } finally {
      setClosing(undefined);
    }
  }

  return (
    <section className="card" aria-labelledby="trust-windows-heading">
      <h2 id="trust-windows-heading">Trust windows</h2>
      <p className="hint">
        Opened as a person approves a held write: the same key may make the same kind of write, with the same values, without review until
        the window expires or its uses run out. The policy still denies what it denies.
      </p>
      <FormError error={loadError ?? closeError} />
      {status && <p role="status">{status}</p>}
      {windows === undefined ? (
        !loadError && <p role="status">Loading…</p>
      ) : windows.length === 0 ? (
        <p>No trust window is open.</p>
      ) : (
        <div className="trust-windows">
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Operation</th>
              <th scope="col">Matching</th>
              <th scope="col">Uses</th>
              <th scope="col">Expires</th>
              <th scope="col">Opened by</th>
              <th scope="col">
                <span className="visually-hidden">Close</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {windows.map((window) => (
              <tr key={window.id} data-trust-window={window.id}>
                <td>{window.api_key.label}</td>
                <td>
                  <code>{window.operation}</code>
                </td>
                <td>
                  <code>{trustMatchText(window.match)}</code>
                </td>
                <td>
                  {window.uses} of {window.max_uses}
                </td>
                <td>{when(window.expires_at)}</td>
                <td>
                  {window.opened_by.email}
                  {window.review_id && <span className="hint"> · review {window.review_id}</span>}
                </td>
                <td>
                  {(canCloseAny || window.opened_by.user_id === personId) && (
                    <button
                      type="button"
                      className="button secondary small"
                      disabled={closing !== undefined}
                      aria-label={`Close now the trust window for ${window.api_key.label} (${window.operation})`}
                      onClick={() => void close(window)}
                    >
                      {closing === window.id ? 'Closing…' : 'Close now'}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
    </section>
  );
}
