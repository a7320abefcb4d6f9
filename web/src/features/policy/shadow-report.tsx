import { useRef, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import { policyApi, type Shadow } from './api';
import { ChangeChart } from './change-chart';
import { ChangeCountList, ChangedDecisionsTable } from './decision-changes';

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** The draft in shadow: since when, how many writes both decided, where the draft would have decided otherwise. */
export function ShadowReport(props: {
  shadow: Shadow | null | undefined;
  loadError: unknown;
  /** Owners and admins may stop it (and start one, from the editor). */
  canEdit: boolean;
  personId: string;
  onChange: (shadow: Shadow | null) => void;
}) {
  const { shadow, loadError, canEdit, personId, onChange } = props;
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<unknown>();
  const working = useRef(false);
  const heading = useRef<HTMLHeadingElement>(null);

  async function act(work: () => Promise<void>) {
    if (working.current) return;
    working.current = true;
    setError(undefined);
    setStatus(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      working.current = false;
    }
  }

  const refresh = () =>
    act(async () => {
      const fresh = await policyApi.shadow();
      onChange(fresh);
      setStatus(fresh ? `Refreshed: ${plural(fresh.decided, 'write')} decided by both.` : 'Refreshed: no draft runs in shadow.');
    });

  const stop = () =>
    act(async () => {
      await policyApi.stopShadow();
      onChange(null);
      setStatus('The shadow is stopped: new writes are decided by the policy in force alone. What it recorded stays on the decisions.');
      // The button pressed is gone; the keyboard goes to the section's heading.
      heading.current?.focus();
    });

  const startedBy = (who: string | null) => (who === null ? 'from the command line' : who === personId ? 'by you' : `by ${who}`);
  const disagreed = shadow ? Object.values(shadow.disagreed).reduce((sum, count) => sum + count, 0) : 0;

  return (
    <section className="card" aria-labelledby="shadow-heading">
      <div className="review-head">
        <h2 id="shadow-heading" ref={heading} tabIndex={-1}>
          Shadow
        </h2>
        {shadow !== undefined && (
          <div className="action-buttons">
            <button type="button" className="button secondary small" onClick={() => void refresh()}>
              Refresh the shadow
            </button>
            {shadow && canEdit && (
              <button type="button" className="button danger small" onClick={() => void stop()}>
                Stop the shadow
              </button>
            )}
          </div>
        )}
      </div>
      <p className="hint">
        A draft in shadow decides every new write beside the policy in force, without effect: the policy in force alone decides. Where the two disagree is
        recorded here.
      </p>
      <p role="status" className="notice-line">
        {status ?? ''}
      </p>
      <FormError error={error ?? loadError} />
      {shadow === undefined ? (
        !loadError && <p role="status">Loading…</p>
      ) : shadow === null ? (
        <p>No draft runs in shadow.{canEdit && ' Start one with "Run in shadow" under the draft above.'}</p>
      ) : (
        <>
          <p>
            <span className="state waiting">Running</span> since {when(shadow.started_at)}, started {startedBy(shadow.started_by)}.{' '}
            {plural(shadow.decided, 'write')} decided by both since;{' '}
            {disagreed === 0 ? 'they agreed on every one.' : `the draft would have decided ${plural(disagreed, 'of them', 'of them')} otherwise.`}
          </p>
          <ChangeCountList counts={shadow.disagreed} label="Disagreements, by what the policy in force decided and what the draft would have" />
          {shadow.disagreements.length > 0 && (
            <>
              <ChangeChart counts={shadow.disagreed} title="Where the draft in shadow disagreed" />
              <ChangedDecisionsTable changes={shadow.disagreements} label="Where the draft in shadow disagreed, newest first" />
            </>
          )}
          <details className="cedar-details">
            <summary>The draft in shadow</summary>
            <pre className="cedar">{shadow.source}</pre>
          </details>
        </>
      )}
    </section>
  );
}
