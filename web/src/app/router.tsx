import type { ReactNode } from 'react';
import { createBrowserRouter, Link, Navigate, useLocation } from 'react-router';
import { AgentsPage } from '../features/agents/agents-page';
import { ApiKeysPage } from '../features/api-keys/api-keys-page';
import { AuditPage } from '../features/audit/audit-page';
import { SetPasswordPage } from '../features/auth/set-password-page';
import { SignInPage } from '../features/auth/sign-in-page';
import { ConsentPage } from '../features/connect/consent-page';
import { DecidePage } from '../features/decide/decide-page';
import { NotificationsPage } from '../features/notifications/notifications-page';
import { SlackLinkPage, SlackLinkSecretTaken } from '../features/notifications/slack-link-page';
import { OverviewPage } from '../features/overview/overview-page';
import { PasskeysPage } from '../features/passkeys/passkeys-page';
import { PeoplePage } from '../features/people/people-page';
import { PolicyPage } from '../features/policy/policy-page';
import { ReviewPage } from '../features/reviews/review-page';
import { ReviewsPage } from '../features/reviews/reviews-page';
import { WebhooksPage } from '../features/webhooks/webhooks-page';
import { useSession, type Permission } from '../lib/session';
import { useDocumentTitle } from '../lib/use-document-title';
import { Frame } from './frame';

/** Pages behind sign-in: without a session, to the sign-in page and back here after. */
function SignedIn({ children }: { children: ReactNode }) {
  const { session } = useSession();
  const location = useLocation();
  if (session === undefined) return <p role="status">Loading…</p>;
  if (session === null) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return children;
}

/** A page for some roles only (those with any of the permissions); the server refuses the rest anyway, this says so in words. */
function Allowed({ permission, children }: { permission: Permission | Permission[]; children: ReactNode }) {
  const { can } = useSession();
  return (Array.isArray(permission) ? permission : [permission]).some(can) ? children : <NotAllowed />;
}

function NotAllowed() {
  useDocumentTitle('Not allowed');
  return (
    <>
      <h1>Not for your role</h1>
      <p>This page is not for your role. Ask an owner or an admin if you need something from it.</p>
      <Link to="/">Back to the overview</Link>
    </>
  );
}

function NotFound() {
  useDocumentTitle('Not found');
  return (
    <>
      <h1>No such page</h1>
      <Link to="/">Back to the overview</Link>
    </>
  );
}

export const router = createBrowserRouter([
  { path: '/sign-in', element: <SignInPage /> },
  { path: '/set-password', element: <SetPasswordPage /> },
  // A decision link from an email: public (the token says who decides), readable on a phone, outside the console's
  // frame. The token is in the fragment (/decide#…); a link sent before had it in the path, which the page moves.
  { path: '/decide/:token?', element: <DecidePage /> },
  {
    // An app's request to connect (OAuth consent): behind sign-in, but a page of its own, without the console's frame.
    path: '/oauth/interaction/:uid',
    element: (
      <SignedIn>
        <ConsentPage />
      </SignedIn>
    ),
  },
  {
    // A Slack user's one-time link to become the signed-in person in Slack (their first press answers with it). Its
    // secret (the fragment; the path's last part in an older link) is taken into the tab before sign-in.
    path: '/slack/link/:token?',
    element: (
      <SlackLinkSecretTaken>
        <SignedIn>
          <SlackLinkPage />
        </SignedIn>
      </SlackLinkSecretTaken>
    ),
  },
  {
    element: (
      <SignedIn>
        <Frame />
      </SignedIn>
    ),
    children: [
      { index: true, element: <OverviewPage /> },
      { path: 'reviews', element: <ReviewsPage /> },
      { path: 'reviews/:id', element: <ReviewPage /> },
      { path: 'agents', element: <AgentsPage /> },
      {
        path: 'policy',
        element: (
          // Reviewers read the policy; owners and admins also change it.
          <Allowed permission={['editPolicy', 'readAudit']}>
            <PolicyPage />
          </Allowed>
        ),
      },
      {
        path: 'audit',
        element: (
          <Allowed permission="readAudit">
            <AuditPage />
          </Allowed>
        ),
      },
      {
        path: 'settings/people',
        element: (
          <Allowed permission="managePeople">
            <PeoplePage />
          </Allowed>
        ),
      },
      {
        path: 'settings/notifications',
        element: (
          // Everyone who decides reviews picks their own email; owners and admins also see the organization's escalation.
          <Allowed permission="decideReviews">
            <NotificationsPage />
          </Allowed>
        ),
      },
      // Everyone's own passkeys: to sign in with, and to sign approvals.
      { path: 'settings/passkeys', element: <PasskeysPage /> },
      {
        path: 'settings/advanced/api-keys',
        element: (
          <Allowed permission="manageKeys">
            <ApiKeysPage />
          </Allowed>
        ),
      },
      {
        path: 'settings/advanced/webhooks',
        element: (
          <Allowed permission="manageWebhooks">
            <WebhooksPage />
          </Allowed>
        ),
      },
      { path: '*', element: <NotFound /> },
    ],
  },
]);
