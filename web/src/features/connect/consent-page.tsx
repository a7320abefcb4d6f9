import { useEffect, useState } from 'react';
import { useParams } from 'react-router';
import { FormError } from '../../lib/form-error';
import { roleNames } from '../../lib/format';
import { useSession } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { connectApi, type ConsentRequest } from './api';
import { ClientIdentity } from './client-identity';
import { ConsentForm } from './consent-form';
import { ConsentersNotice } from './consenters-notice';

/**
 * Where the authorization server sends a person whose app (an MCP client) asks to connect to their organization:
 * which app, for which organization and as whom, and the person's answer. A page of its own, without the console's
 * navigation, like the sign-in page: the person came from the app and goes back to it.
 */
export function ConsentPage() {
  const { uid = '' } = useParams();
  const [request, setRequest] = useState<ConsentRequest>();
  const [error, setError] = useState<unknown>();
  useDocumentTitle(request ? `Connect “${request.client.name}”` : 'Connect an app');

  useEffect(() => {
    let current = true;
    connectApi.request(uid).then(
      (found) => current && setRequest(found),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [uid]);

  return (
    <main className="narrow consent" id="main">
      {request ? (
        <>
          <h1>
            Connect “{request.client.name}” to {request.organization.name}
          </h1>
          <ClientIdentity client={request.client} />
          <SignedInAs request={request} />
          {request.may_consent ? <ConsentForm uid={uid} request={request} /> : <ConsentersNotice uid={uid} request={request} />}
        </>
      ) : error ? (
        <>
          <h1>Connect an app</h1>
          <FormError error={error} />
        </>
      ) : (
        <p role="status">Loading the connection request…</p>
      )}
    </main>
  );
}

/** The organization the app would act in and who connects it; signing out comes back here to sign in to another. */
function SignedInAs({ request }: { request: ConsentRequest }) {
  const { signOut } = useSession();
  const { organization, person } = request;
  return (
    <section aria-labelledby="signed-in-heading">
      <h2 id="signed-in-heading">Your organization</h2>
      <p>
        Signed in to <strong>{organization.name}</strong> (<code>{organization.slug}</code>) as <strong>{person.email}</strong>{' '}
        <span className="hint">({roleNames[person.role]})</span>
      </p>
      <button
        type="button"
        className="button secondary small"
        // Signed out whatever the server said; the sign-in page then brings the person back to this request.
        onClick={() => void signOut().catch(() => undefined)}
      >
        Not this organization? Sign out
      </button>
    </section>
  );
}
