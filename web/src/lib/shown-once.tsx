import { useEffect, useRef, type ReactNode } from 'react';
import { CopyButton } from './copy-button';

/**
 * A secret shown this once (a key's token, a set-password link): the focus goes to it when it appears, so a
 * person and a screen reader find it, and to `returnFocus` when the person dismisses it.
 */
export function ShownOnce(props: {
  id: string;
  title: ReactNode;
  children: ReactNode;
  secret: string;
  secretLabel: string;
  copyLabel: string;
  dismissLabel: string;
  onDismiss: () => void;
  returnFocus: { current: HTMLElement | null };
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [props.secret]);
  return (
    <section className="card secret" aria-labelledby={props.id}>
      <h2 id={props.id} ref={heading} tabIndex={-1}>
        {props.title}
      </h2>
      {props.children}
      <div className="secret-row">
        <code className="token" aria-label={props.secretLabel}>
          {props.secret}
        </code>
        <CopyButton text={props.secret} label={props.copyLabel} />
      </div>
      <button
        type="button"
        className="button secondary"
        onClick={() => {
          props.onDismiss();
          props.returnFocus.current?.focus();
        }}
      >
        {props.dismissLabel}
      </button>
    </section>
  );
}
