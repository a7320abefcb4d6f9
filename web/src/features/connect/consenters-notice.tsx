import { FormError } from '../../lib/form-error';
import { roleNames } from '../../lib/format';
import { connectApi, type ConsentRequest } from './api';
import { useAnswer } from './use-answer';

const roleName = (role: string) => (role in roleNames ? roleNames[role as keyof typeof roleNames] : role);

/** For a person who may not connect apps: who may, and the way back to the app without connecting it. */
export function ConsentersNotice({ uid, request }: { uid: string; request: ConsentRequest }) {
  const { pending, returning, error, answer } = useAnswer();
  const { organization, person, consenters, client } = request;
  return (
    <section aria-labelledby="consenters-heading" className="notice stack tight">
      <h2 id="consenters-heading">Only owners and admins can connect apps</h2>
      <p>
        You are {person.role === 'admin' || person.role === 'owner' ? 'an' : 'a'} {roleNames[person.role].toLowerCase()} of {organization.name}. Ask an owner or an
        admin to connect {client.name}:
      </p>
      {consenters.length === 0 ? (
        <p>Nobody in {organization.name} can at the moment.</p>
      ) : (
        <ul className="consenters">
          {consenters.map((consenter) => (
            <li key={consenter.email}>
              {consenter.name && <>{consenter.name} · </>}
              <a href={`mailto:${consenter.email}`}>{consenter.email}</a> <span className="hint">({roleName(consenter.role)})</span>
            </li>
          ))}
        </ul>
      )}
      <FormError error={error} />
      {returning && <p role="status">Returning you to {client.redirect_host}…</p>}
      <button
        type="button"
        className="button secondary"
        aria-describedby="consenters-cancel-hint"
        disabled={pending !== undefined}
        onClick={() => void answer('deny', () => connectApi.deny(uid, request.csrf_token))}
      >
        {pending ? 'Cancelling…' : 'Cancel'}
      </button>
      <span id="consenters-cancel-hint" className="hint">Cancel tells {client.name} that it was not connected, and returns you to it.</span>
    </section>
  );
}
