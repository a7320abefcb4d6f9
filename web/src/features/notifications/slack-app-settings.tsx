import { useEffect, useState, type FormEvent } from 'react';
import { CopyButton } from '../../lib/copy-button';
import { problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { SaveRow } from '../../lib/save-row';
import { notificationsApi, type SlackApp } from './api';

const formFields = ['signing_secret', 'workspace'] as const;

/**
 * Owners and admins: the Slack app whose Approve and Deny buttons decide held writes. Its Request URL to paste into
 * the app, the signing secret (written here, never shown back), and the workspace presses must come from.
 */
export function SlackAppSettings() {
  const [app, setApp] = useState<SlackApp>();
  const [secret, setSecret] = useState('');
  const [team, setTeam] = useState('');
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const problems = problemsByField(error, formFields);
  const placed = Object.keys(problems).length > 0;

  const shown = (next: SlackApp) => {
    setApp(next);
    setTeam(next.workspace ?? '');
    setSecret('');
  };

  useEffect(() => {
    notificationsApi.slackApp().then(shown, setError);
  }, []);

  async function save(change: Parameters<typeof notificationsApi.updateSlackApp>[0], said: string) {
    setBusy(true);
    setError(undefined);
    setStatus(undefined);
    try {
      shown(await notificationsApi.updateSlackApp(change));
      setStatus(said);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    const change: Parameters<typeof notificationsApi.updateSlackApp>[0] = { workspace: team.trim() === '' ? null : team.trim() };
    if (secret.trim() !== '') change.signing_secret = secret.trim();
    void save(change, 'Saved.');
  }

  return (
    <section className="card" aria-labelledby="slack-app-heading">
      <h2 id="slack-app-heading">Slack buttons</h2>
      <p>
        With a Slack app of your own, each held write's Slack message carries <strong>Approve</strong> and <strong>Deny</strong>. A press counts only when
        Slack signed it with the app's signing secret, and only as the person who linked that Slack user to themselves here, signed in.
      </p>
      {app === undefined ? (
        error ? <FormError error={error} /> : <p role="status">Loading…</p>
      ) : (
        <form onSubmit={submit} className="stack" noValidate>
          <div className="field wide">
            <span id="slack-request-url-label">Request URL (the app's Interactivity &amp; Shortcuts)</span>
            <div className="row">
              <code aria-labelledby="slack-request-url-label">{app.request_url}</code>
              <CopyButton text={app.request_url} label="Copy the Request URL" />
            </div>
          </div>
          <FormField
            id="slack-signing-secret"
            label="Signing secret"
            className="wide"
            problem={problems.signing_secret}
            hint={
              app.signing_secret === 'set'
                ? 'Set. It is never shown again; type a new one to replace it. Changing or removing it unlinks every Slack user of the organization (whoever knows a secret can sign presses as any of them): each person links theirs again.'
                : "Not set: presses are refused. Copy it from the app's Basic Information → App Credentials."
            }
          >
            {(control) => (
              <input
                {...control}
                type="password"
                autoComplete="off"
                maxLength={200}
                placeholder={app.signing_secret === 'set' ? '••••••••••••' : ''}
                value={secret}
                onChange={(event) => {
                  setSecret(event.target.value);
                  setStatus(undefined);
                }}
              />
            )}
          </FormField>
          <FormField
            id="slack-team"
            label="Workspace id"
            problem={problems.workspace}
            hint="Presses from any other workspace are refused. Left empty, the first verified press binds its workspace."
          >
            {(control) => (
              <input
                {...control}
                maxLength={30}
                placeholder="T0123ABCD"
                value={team}
                onChange={(event) => {
                  setTeam(event.target.value);
                  setStatus(undefined);
                }}
              />
            )}
          </FormField>
          {!placed && <FormError error={error} />}
          <SaveRow label="Save the Slack app" busy={busy} status={status} />
          {app.signing_secret === 'set' && (
            <p>
              <button type="button" className="button secondary small" disabled={busy} onClick={() => void save({ signing_secret: null }, 'The signing secret is removed: presses are refused, and every Slack link is gone.')}>
                Remove the signing secret
              </button>
            </p>
          )}
        </form>
      )}
    </section>
  );
}
