import { useEffect, useRef, useState, type FormEvent } from 'react';
import { problemsByField } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { SaveRow } from '../../lib/save-row';
import { notificationsApi, type ReviewNotificationSettings } from './api';

const formFields = ['review_escalation', 'slack_webhook_url'] as const;

/** The form's state from what the server keeps: a null is the "never" or "none" choice, and the text is kept for a change of mind. */
interface Draft {
  escalates: boolean;
  wait: string;
  posts: boolean;
  url: string;
}

const draftOf = (settings: ReviewNotificationSettings): Draft => ({
  escalates: settings.review_escalation !== null,
  wait: settings.review_escalation ?? '',
  posts: settings.slack_webhook_url !== null,
  url: settings.slack_webhook_url ?? '',
});

function savedSummary(settings: ReviewNotificationSettings): string {
  const escalation = settings.review_escalation === null ? 'reviews never escalate' : `reviews escalate every ${settings.review_escalation} (admins, then owners)`;
  return `Saved: ${escalation}; ${settings.slack_webhook_url === null ? 'no Slack messages' : 'Slack messages go to the webhook'}.`;
}

/** Owners and admins: when a waiting review goes to the next tier, and the Slack channel told of held writes. */
export function EscalationSettings() {
  const [draft, setDraft] = useState<Draft>();
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const waitInput = useRef<HTMLInputElement>(null);
  const urlInput = useRef<HTMLInputElement>(null);

  const problems = problemsByField(error, formFields);
  const placed = Object.keys(problems).length > 0;

  useEffect(() => {
    notificationsApi.settings().then((settings) => setDraft(draftOf(settings)), setError);
  }, []);

  // The keyboard goes to the first field the API refused, which now says why.
  useEffect(() => {
    const first = problemsByField(error, formFields);
    if (first.review_escalation) waitInput.current?.focus();
    else if (first.slack_webhook_url) urlInput.current?.focus();
  }, [error]);

  const change = (next: Partial<Draft>) => {
    setDraft((current) => current && { ...current, ...next });
    setStatus(undefined);
  };

  async function save(event: FormEvent) {
    event.preventDefault();
    if (!draft) return;
    setBusy(true);
    setError(undefined);
    setStatus(undefined);
    try {
      const saved = await notificationsApi.updateSettings({
        review_escalation: draft.escalates ? draft.wait.trim() : null,
        slack_webhook_url: draft.posts ? draft.url.trim() : null,
      });
      setDraft(draftOf(saved));
      setStatus(savedSummary(saved));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="escalation-heading">
      <h2 id="escalation-heading">Review escalation and Slack</h2>
      <p>When an agent's write is held, Gatehouse tells people in turn until someone decides it:</p>
      <ol className="tiers">
        <li>
          <strong>Reviewers</strong>, at once.
        </li>
        <li>
          <strong>Admins</strong>, if it still waits after the escalation wait.
        </li>
        <li>
          <strong>Owners</strong>, if it still waits after another such wait.
        </li>
      </ol>
      <p className="hint">
        Each tier skips people who are deactivated, linked to an inactive team member, or out of office (their team member has a calendar event of kind{' '}
        <code>out_of_office</code> at that moment); when a tier has nobody left, the next one is told. Link people to their team members under Settings → People.
      </p>
      {draft === undefined ? (
        error ? <FormError error={error} /> : <p role="status">Loading…</p>
      ) : (
        <form onSubmit={(event) => void save(event)} className="stack" noValidate>
          <fieldset>
            <legend>Escalation</legend>
            <label className="choice">
              <input type="radio" name="escalation" checked={draft.escalates} onChange={() => change({ escalates: true })} />
              Escalate after a wait
            </label>
            <FormField
              id="escalation-wait"
              label="Wait before the next tier"
              className="nested"
              problem={problems.review_escalation}
              hint="A number and a unit, e.g. 45s, 30m, 2h or 1d; at most 30 days."
            >
              {(control) => (
                <input
                  {...control}
                  ref={waitInput}
                  maxLength={20}
                  placeholder="30m"
                  disabled={!draft.escalates}
                  value={draft.wait}
                  onChange={(event) => change({ wait: event.target.value })}
                />
              )}
            </FormField>
            <label className="choice">
              <input type="radio" name="escalation" checked={!draft.escalates} onChange={() => change({ escalates: false })} />
              Never escalate: only reviewers are told
            </label>
          </fieldset>
          <fieldset>
            <legend>Slack</legend>
            <label className="choice">
              <input type="radio" name="slack" checked={draft.posts} onChange={() => change({ posts: true })} />
              Post each held write and escalation to an incoming webhook
            </label>
            <FormField
              id="slack-url"
              label="Incoming webhook URL"
              className="nested wide"
              problem={problems.slack_webhook_url}
              hint="A Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat…): an https address that reaches the public internet. Each message links to the review's page."
            >
              {(control) => (
                <input
                  {...control}
                  ref={urlInput}
                  type="url"
                  inputMode="url"
                  maxLength={2000}
                  placeholder="https://hooks.slack.com/services/…"
                  disabled={!draft.posts}
                  value={draft.url}
                  onChange={(event) => change({ url: event.target.value })}
                />
              )}
            </FormField>
            <label className="choice">
              <input type="radio" name="slack" checked={!draft.posts} onChange={() => change({ posts: false })} />
              None: no Slack messages
            </label>
          </fieldset>
          {!placed && <FormError error={error} />}
          <SaveRow label="Save escalation and Slack" busy={busy} status={status} />
        </form>
      )}
    </section>
  );
}
