import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { FormError } from '../../lib/form-error';
import { useSignedIn } from '../../lib/session';
import { policyApi, type OrganizationSettings } from './api';
import { ApproveLinksChoice } from './approve-links-choice';

type Setting = 'self_approval' | 'share_policy_text' | 'approvals_need_passkey';

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
  {
    setting: 'approvals_need_passkey',
    label: 'Approvals need a passkey',
    on: "On: every approval is signed by the approver's passkey over the review, the exact write and the time; approvals that cannot carry one (a personal access token, a Slack button) are refused with a link to finish on the review's page.",
    off: "Off: a signed-in person's approval counts as it is; anyone may still sign theirs with a passkey.",
  },
];

/**
 * Owners and admins: whether people may approve their own keys' writes, whether approvals need a passkey, what an
 * Approve link from an email needs, and whether agents see the rules' text.
 */
export function OrganizationSwitches() {
  const [settings, setSettings] = useState<OrganizationSettings>();
  const [loadError, setLoadError] = useState<unknown>();
  const [ownPasskeys, setOwnPasskeys] = useState<number>();
  const { refresh } = useSignedIn();

  useEffect(() => {
    policyApi.organization().then(setSettings, setLoadError);
    policyApi.ownPasskeys().then(setOwnPasskeys, () => undefined);
  }, []);

  return (
    <section className="card" aria-labelledby="organization-switches-heading">
      <h2 id="organization-switches-heading">Approvals and what agents see</h2>
      {settings === undefined ? (
        loadError ? <FormError error={loadError} /> : <p role="status">Loading…</p>
      ) : (
        <div className="stack">
          {switches.map((item) => (
            <SettingSwitch
              key={item.setting}
              {...item}
              value={settings[item.setting]}
              onSaved={(saved) => {
                setSettings(saved);
                // The session carries whether approvals need a passkey; the review queue reads it from there.
                void refresh();
              }}
            />
          ))}
          <ApproveLinksChoice value={settings.approve_links} passkeysWin={settings.approvals_need_passkey} onSaved={setSettings} />
          {settings.approvals_need_passkey && ownPasskeys === 0 && (
            <p className="notice" role="status">
              You have no passkey, so you cannot approve anything while this is on: <Link to="/settings/passkeys">add one in Settings → Passkeys</Link>.
            </p>
          )}
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
