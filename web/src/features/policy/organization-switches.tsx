import { useEffect, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { policyApi, type OrganizationSettings } from './api';

type Setting = keyof OrganizationSettings;

const switches: { setting: Setting; label: string; on: string; off: string }[] = [
  {
    setting: 'self_approval',
    label: 'Let people approve writes made with API keys they created',
    on: 'On: a person may approve a held write made with an API key they created.',
    off: 'Off: nobody approves a write made with an API key they created; someone else must.',
  },
  {
    setting: 'share_policy_text',
    label: 'Show agents the Cedar text of the rules that decided',
    on: 'On: an agent told of a Deny or a Review also gets the Cedar text of the rules that decided.',
    off: "Off: an agent told of a Deny or a Review gets the rules' ids, reasons, hints and the fields they read, not their text.",
  },
];

/** Owners and admins: whether people may approve their own keys' writes, and whether agents see the rules' text. */
export function OrganizationSwitches() {
  const [settings, setSettings] = useState<OrganizationSettings>();
  const [loadError, setLoadError] = useState<unknown>();

  useEffect(() => {
    policyApi.organization().then(setSettings, setLoadError);
  }, []);

  return (
    <section className="card" aria-labelledby="organization-switches-heading">
      <h2 id="organization-switches-heading">Approvals and what agents see</h2>
      {settings === undefined ? (
        loadError ? <FormError error={loadError} /> : <p role="status">Loading…</p>
      ) : (
        <div className="stack">
          {switches.map((item) => (
            <SettingSwitch key={item.setting} {...item} value={settings[item.setting]} onSaved={setSettings} />
          ))}
        </div>
      )}
    </section>
  );
}

function SettingSwitch(props: { setting: Setting; label: string; on: string; off: string; value: boolean; onSaved: (settings: OrganizationSettings) => void }) {
  const { setting, label, on, off, value, onSaved } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const id = setting.replaceAll('_', '-');
  return (
    <div className="switch-row">
      <button
        type="button"
        role="switch"
        aria-checked={value}
        aria-labelledby={`${id}-label`}
        aria-describedby={`${id}-hint`}
        className={`switch ${value ? 'on' : ''}`}
        // Not disabled while it saves: a disabled button drops the keyboard's focus.
        aria-busy={busy}
        onClick={() => {
          if (busy) return;
          setBusy(true);
          setError(undefined);
          policyApi
            .updateOrganization({ [setting]: !value })
            .then(onSaved, setError)
            .finally(() => setBusy(false));
        }}
      >
        <span className="knob" aria-hidden="true" />
      </button>
      <div>
        <span id={`${id}-label`} className="switch-label">
          {label}
        </span>
        <span id={`${id}-hint`} className="hint">
          {value ? on : off}
        </span>
      </div>
      <FormError error={error} />
    </div>
  );
}
