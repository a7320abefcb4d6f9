import { useEffect, useRef } from 'react';
import { ShownOnce } from '../../lib/shown-once';
import { when } from '../../lib/format';
import type { LinkHandOver as HandOver, Person } from './api';

/**
 * A person's new set-password link, as the server handed it over: emailed to them alone (said here, never shown),
 * or, where no email is configured, shown once to the owner or admin who asked, who must give it to them.
 */
export function LinkHandOver({
  person,
  handOver,
  why,
  onDismiss,
  returnFocus,
}: {
  person: Person;
  handOver: HandOver;
  why: 'invited' | 'reset';
  onDismiss: () => void;
  returnFocus: { current: HTMLElement | null };
}) {
  const title = why === 'invited' ? `${person.email} is invited` : `The password of ${person.email} is reset`;
  const { set_password_link: link, set_password_email: email } = handOver;
  if (link) {
    return (
      <ShownOnce
        id="link-heading"
        title={title}
        secret={link.url}
        secretLabel="Set-password link"
        copyLabel="Copy link"
        dismissLabel="Done"
        onDismiss={onDismiss}
        returnFocus={returnFocus}
      >
        <p>Give them this link to set a password. It is shown once, works once, and expires {when(link.expires_at)}.</p>
        <p className="hint">
          No email is configured, so the link came to you: until their password is reset by someone else or by email, they cannot approve writes of API
          keys you created, and their approval and yours count as one.
        </p>
      </ShownOnce>
    );
  }
  if (!email) return null;
  return <EmailedLink title={title} email={email} onDismiss={onDismiss} returnFocus={returnFocus} />;
}

function EmailedLink({
  title,
  email,
  onDismiss,
  returnFocus,
}: {
  title: string;
  email: NonNullable<HandOver['set_password_email']>;
  onDismiss: () => void;
  returnFocus: { current: HTMLElement | null };
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [email]);
  return (
    <section className="card stack" aria-labelledby="link-heading">
      <h2 id="link-heading" ref={heading} tabIndex={-1}>
        {title}
      </h2>
      {email.sent ? (
        <p role="status">
          A link to set a password was sent to {email.to}, and to nobody else. It works once, until {when(email.expires_at)}.
        </p>
      ) : (
        <p className="error" role="alert">
          The email with their link could not be sent to {email.to} ({email.problem}). That link was voided: send a new one with Reset password.
        </p>
      )}
      <button
        type="button"
        className="button secondary"
        onClick={() => {
          onDismiss();
          returnFocus.current?.focus();
        }}
      >
        Done
      </button>
    </section>
  );
}
