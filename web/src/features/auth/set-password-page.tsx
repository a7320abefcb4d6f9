import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError } from '../../lib/api';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { useSession } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';

interface LinkHolder {
  email: string;
  name: string | null;
  organization: { slug: string; name: string };
}

const minLength = 12;

/** Opened from a one-time link: the secret is in the fragment, which never leaves the browser but to this call. */
export function SetPasswordPage() {
  useDocumentTitle('Set your password');
  const navigate = useNavigate();
  const { session, signOut } = useSession();
  const [token] = useState(() => {
    try {
      return decodeURIComponent(window.location.hash.slice(1));
    } catch {
      return '';
    }
  });
  const [holder, setHolder] = useState<LinkHolder | null>();
  const [linkError, setLinkError] = useState<unknown>(() =>
    token ? undefined : new ApiError(410, 'link_invalid', 'This page needs the link you were given; open it again.'),
  );
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    // The secret should not stay in the address bar or the history.
    window.history.replaceState(null, '', window.location.pathname);
    if (!token) return;
    api.post<LinkHolder>('/password-link', { token }).then(setHolder, setLinkError);
  }, [token]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (password !== confirmation) {
      setError(new ApiError(422, 'validation_failed', 'The two passwords are not the same.'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const done = await api.post<LinkHolder>('/password', { token, password });
      if (session) await signOut();
      const query = new URLSearchParams({ organization: done.organization.slug, email: done.email, password: 'set' });
      void navigate(`/sign-in?${query}`, { replace: true });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="narrow" id="main">
      <h1>Set your password</h1>
      {linkError ? <FormError error={linkError} /> : null}
      {holder === undefined && !linkError && <p role="status">Checking your link…</p>}
      {holder && (
        <form onSubmit={(event) => void submit(event)} className="stack">
          <p>
            For <strong>{holder.email}</strong> in <strong>{holder.organization.name}</strong> (organization <code>{holder.organization.slug}</code>).
          </p>
          {/* Lets a password manager save the new password under the right account. */}
          <FormField id="username" label="Email">
            {(control) => <input {...control} name="username" type="email" autoComplete="username" value={holder.email} readOnly />}
          </FormField>
          <FormField id="new-password" label="New password" hint={<>At least {minLength} characters. A phrase of several words is easy to remember and hard to guess.</>}>
            {(control) => (
              <input
                {...control}
                type="password"
                autoComplete="new-password"
                required
                minLength={minLength}
                value={password}
                onChange={(event) => setPassword(event.target.value)}
              />
            )}
          </FormField>
          <FormField id="confirm-password" label="The same password again">
            {(control) => (
              <input
                {...control}
                type="password"
                autoComplete="new-password"
                required
                value={confirmation}
                onChange={(event) => setConfirmation(event.target.value)}
              />
            )}
          </FormField>
          <FormError error={error} />
          <button type="submit" className="button" disabled={busy}>
            {busy ? 'Saving…' : 'Set password'}
          </button>
        </form>
      )}
    </main>
  );
}
