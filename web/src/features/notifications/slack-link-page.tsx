import { useEffect, useState, type ReactNode } from 'react';
import { Link, Navigate, useLocation, useParams } from 'react-router';
import { ApiError } from '../../lib/api';
import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import { forgetLinkToken, keepLinkToken, keptLinkToken, tokenInAddress } from '../../lib/link-token';
import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { notificationsApi, type SlackLink, type SlackLinkOffer } from './api';
import { isNamed, slackUserName, workspaceName } from './slack-user';

/** What the page keeps its secret as, in the tab. */
const slackLink = 'slack';

/**
 * The way into the page: the link's secret (its fragment, or the path's last part in an older link) is kept in the
 * tab and the address cleared of it before anything else, so that the way through sign-in never carries it.
 */
export function SlackLinkSecretTaken({ children }: { children: ReactNode }) {
  const { token: inPath } = useParams();
  const { hash } = useLocation();
  const inAddress = tokenInAddress(hash, inPath);
  if (inAddress) {
    keepLinkToken(slackLink, inAddress);
    return <Navigate to="/slack/link" replace />;
  }
  return children;
}

/**
 * Where a Slack press by an unlinked Slack user sends them: which Slack user would become the signed-in person, by
 * the names Slack's signed press gave and by Slack's ids, and one button that names that Slack user (behind sign-in:
 * a person who was not signed in comes back here after). A forwarded offer shows someone else's Slack user.
 */
export function SlackLinkPage() {
  useDocumentTitle('Link your Slack');
  const [token] = useState(() => keptLinkToken(slackLink));
  const { person, organization } = useSignedIn();
  const [offer, setOffer] = useState<SlackLinkOffer | undefined>();
  const [linked, setLinked] = useState<SlackLink>();
  const [error, setError] = useState<unknown>(() =>
    token ? undefined : new ApiError(410, 'link_invalid', 'This page needs the link Slack answered your press with: press Approve or Deny in Slack again.'),
  );
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) return;
    let current = true;
    notificationsApi.slackLinkOffer(token).then(
      (found) => current && setOffer(found),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [token]);

  async function confirm(slackUser: string) {
    setBusy(true);
    setError(undefined);
    try {
      setLinked(await notificationsApi.confirmSlackLink(token, slackUser));
      forgetLinkToken(slackLink);
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
            Linked: Slack user {slackUserName(linked)} in workspace {workspaceName(linked)} is you, {person.email}, in {organization.name}. Press Approve or
            Deny in Slack again.
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
            Link Slack user <strong>{slackUserName(offer)}</strong> in workspace <strong>{workspaceName(offer)}</strong>
            {isNamed(offer) && (
              <>
                {' '}
                (Slack ids <code>{offer.slack_user}</code> in <code>{offer.workspace}</code>)
              </>
            )}{' '}
            to you (<strong>{person.email}</strong>) in <strong>{organization.name}</strong>?
          </p>
          <p className="hint">
            {isNamed(offer)
              ? `These are the names Slack gave with the press: if ${slackUserName(offer)} is not you, someone else pressed, and this link is theirs.`
              : 'Slack gave no names with this press: check the ids against your profile (“Copy member ID”).'}{' '}
            Its presses of Approve and Deny will be your verdicts, and a Slack user you linked before in this workspace is unlinked. This link works once,
            until {when(offer.expires_at)}.
          </p>
          <FormError error={error} />
          <button type="button" className="button" disabled={busy} onClick={() => void confirm(offer.slack_user)}>
            {busy ? 'Linking…' : `Yes, Slack user ${slackUserName(offer)} in ${workspaceName(offer)} is me`}
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
