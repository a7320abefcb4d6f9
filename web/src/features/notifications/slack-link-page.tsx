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
          <p role="alert" className="warning">
            <strong>
              Confirm only a link you got yourself by pressing a button in Slack just now. If someone sent you this link, do not confirm: whoever holds that
              Slack user would approve and deny as you.
            </strong>
          </p>
          <p>
            Link the Slack user whose id is <code>{offer.slack_user}</code>, in the workspace whose id is <code>{offer.workspace}</code>, to you (
            <strong>{person.email}</strong>) in <strong>{organization.name}</strong>? These are Slack's own ids (your profile's “Copy member ID” shows yours); a
            name proves nothing, so none is shown.
          </p>
          <p className="hint">
            Its presses of Approve and Deny will be your verdicts, and a Slack user you linked before in this workspace is unlinked. This link works once,
            until {when(offer.expires_at)}.
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
