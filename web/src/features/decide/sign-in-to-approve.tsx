import { useState } from 'react';
import { useNavigate } from 'react-router';
import { keepLinkToken } from '../../lib/link-token';
import { useSession } from '../../lib/session';
import type { DecisionLink } from './api';

/** What this page keeps its token as, in the tab, on the way through sign-in. */
export const decideLink = 'decide';

/**
 * An Approve link of an organization that approves from a link only for its person signed in, opened by nobody
 * signed in or by someone else (`signedInAs`): whom the link is for, and a way to sign in as them that comes back
 * here, the token kept in the tab meanwhile (never in the sign-in page's address).
 */
export function SignInToApprove({ link, token, signedInAs }: { link: DecisionLink; token: string; signedInAs?: string }) {
  const navigate = useNavigate();
  const { signOut } = useSession();
  const [busy, setBusy] = useState(false);
  const { email } = link.person;

  async function signInAsThem() {
    setBusy(true);
    keepLinkToken(decideLink, token);
    try {
      if (signedInAs) await signOut();
    } finally {
      const query = new URLSearchParams({ organization: link.organization.slug, email, next: '/decide' });
      void navigate(`/sign-in?${query}`);
    }
  }

  return (
    <section className="stack decide-form sign-in-to-approve" aria-labelledby="sign-in-to-approve">
      <h2 id="sign-in-to-approve">Sign in to approve</h2>
      {signedInAs ? (
        <p>
          This link is for <strong>{email}</strong>. You are signed in as <strong>{signedInAs}</strong>: {link.organization.name} approves from a link only for
          the person it was sent to.
        </p>
      ) : (
        <p>
          Approving from this link needs you signed in as <strong>{email}</strong>: {link.organization.name} asks for it, so that the link alone, read by
          someone else, approves nothing.
        </p>
      )}
      <button type="button" className="button" disabled={busy} onClick={() => void signInAsThem()}>
        Sign in as {email}
      </button>
      <p className="hint">You come back to this page after signing in, and approve in one tap. Denying needs no sign-in: the Deny link in the same email works as it is.</p>
    </section>
  );
}
