import { useState } from 'react';
import { FormError } from '../../lib/form-error';
import { keysApi } from './api';

/** The spec's "Enable API access for this organization": off, every key is refused; people still sign in. */
export function ApiAccessSwitch({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <div className="switch-row">
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-labelledby="api-access-label"
        aria-describedby="api-access-hint"
        className={`switch ${on ? 'on' : ''}`}
        // Not disabled while it saves: a disabled button drops the keyboard's focus.
        aria-busy={busy}
        onClick={() => {
          if (busy) return;
          setBusy(true);
          setError(undefined);
          keysApi
            .setApiAccess(!on)
            .then((organization) => onChange(organization.api_access), setError)
            .finally(() => setBusy(false));
        }}
      >
        <span className="knob" aria-hidden="true" />
      </button>
      <div>
        <span id="api-access-label" className="switch-label">
          Enable API access for this organization
        </span>
        <span id="api-access-hint" className="hint">
          {on ? 'On: API keys work over REST and MCP.' : 'Off: every API key and personal token is refused. People still sign in here.'}
        </span>
      </div>
      <FormError error={error} />
    </div>
  );
}
