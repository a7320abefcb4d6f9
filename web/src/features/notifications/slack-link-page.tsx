import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { notificationsApi, type SlackLink, type SlackLinkOffer } from './api';

/**
 * Where a Slack press by an unlinked Slack user sends them: which Slack user would become the signed-in person, and
 * one button that confirms it (behind sign-in: a person who was not signed in comes back here after).
 */
export function SlackLinkPage() {
  useDocumentTitle('Link your Slack');
  const { token = '' } = useParams();
  const { person, organization } = useSignedIn();
  const [offer, setOffer] = useState<SlackLinkOffer | undefined>();
  const [linked, setLinked] = useState<SlackLink>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let current = true;
    notificationsApi.slackLinkOffer(token).then(
      (found) => current && setOffer(found),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [token]);

  async function confirm() {
    setBusy(true);
    setError(undefined);
    try {
      setLinked(await notificationsApi.confirmSlackLink(token));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>Link your Slack</h1>
      {linked ? (
        <>
          <p role="status">
            Linked: Slack user <code>{linked.slack_user}</code> in workspace <code>{linked.workspace}</code> is you, {person.email}, in {organization.name}. Press
            Approve or Deny in Slack again.
          </p>
          <Link to="/settings/notifications">Your Slack links</Link>
        </>
      ) : offer ? (
        <>
          <p>
            Link Slack user <code>{offer.slack_user}</code>
            {offer.slack_user_name ? <> (who goes by “{offer.slack_user_name}” in Slack)</> : null} in workspace <code>{offer.workspace}</code> to you (
            <strong>{person.email}</strong>) in <strong>{organization.name}</strong>?
          </p>
          <p className="hint">
            Its presses of Approve and Deny will be your verdicts. Confirm only if you pressed that button in Slack yourself, just now. This link works once, until{' '}
            {when(offer.expires_at)}.
          </p>
          <FormError error={error} />
          <button type="button" className="button" disabled={busy} onClick={() => void confirm()}>
            {busy ? 'Linking…' : 'Confirm: this Slack user is me'}
          </button>
        </>
      ) : error ? (
        <FormError error={error} />
      ) : offer === null ? (
        <p role="alert">
          This Slack link has expired, was used already, or is for another organization than {organization.name}. Press Approve or Deny in Slack again for a new
          one, and sign in to the organization whose Slack you pressed in.
        </p>
      ) : (
        <p role="status">Loading…</p>
      )}
    </main>
  );
}
