import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Navigate, useSearchParams } from 'react-router';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { useSession } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';

const remembered = 'gatehouse.sign-in';

/** Where to go after signing in: a page of ours, never another site. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

function rememberedFields(): { organization: string; email: string } {
  try {
    return { organization: '', email: '', ...(JSON.parse(localStorage.getItem(remembered) ?? '{}') as object) };
  } catch {
    return { organization: '', email: '' };
  }
}

export function SignInPage() {
  useDocumentTitle('Sign in');
  const { session, signIn, signInWithPasskey } = useSession();
  const [params] = useSearchParams();
  const start = rememberedFields();
  const [organization, setOrganization] = useState(params.get('organization') ?? start.organization);
  const [email, setEmail] = useState(params.get('email') ?? start.email);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const next = safeNext(params.get('next'));
  const passwordField = useRef<HTMLInputElement>(null);

  // Signed in (now, or already on arrival): on to where the person was going. The playground is a page of the
  // api, not of this app, so the browser loads it, once.
  const leaving = useRef(false);
  const toApi = next.startsWith('/api/');
  useEffect(() => {
    if (session && toApi && !leaving.current) {
      leaving.current = true;
      window.location.assign(next);
    }
  }, [session, toApi, next]);
  if (session && !toApi) return <Navigate to={next} replace />;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      localStorage.setItem(remembered, JSON.stringify({ organization, email }));
      await signIn({ organization, email, password });
    } catch (failure) {
      setError(failure);
      setPassword('');
      passwordField.current?.focus();
    } finally {
      setBusy(false);
    }
  }

  async function withPasskey() {
    setBusy(true);
    setError(undefined);
    try {
      await signInWithPasskey();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>Sign in to Gatehouse</h1>
      {params.get('password') === 'set' && (
        <p className="notice" role="status">
          Your password is set. Sign in with it now.
        </p>
      )}
      <form onSubmit={(event) => void submit(event)} className="stack">
        <FormField id="organization" label="Organization" hint={<>Your organization's short name, as in its links: for example <code>demo</code>.</>}>
          {(control) => (
            <input
              {...control}
              name="organization"
              autoComplete="organization"
              required
              value={organization}
              onChange={(event) => setOrganization(event.target.value)}
            />
          )}
        </FormField>
        <FormField id="email" label="Email">
          {(control) => <input {...control} name="email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />}
        </FormField>
        <FormField id="password" label="Password">
          {(control) => (
            <input
              {...control}
              ref={passwordField}
              name="password"
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.target.value)}
            />
          )}
        </FormField>
        <FormError error={error} />
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <div className="stack passkey-sign-in">
        {/* Named apart from "Sign in", the form's own button, so that neither name contains the other. */}
        <p className="hint">Or sign in with a passkey, without typing anything:</p>
        <button type="button" className="button secondary" disabled={busy} onClick={() => void withPasskey()}>
          Use a passkey
        </button>
      </div>
      <p className="hint">Forgot your password? Ask an owner or admin of your organization for a new link.</p>
    </main>
  );
}
