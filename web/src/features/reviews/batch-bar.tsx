import { useState } from 'react';
import { FormError } from '../../lib/form-error';
import { useSignedIn } from '../../lib/session';
import { reviewsApi } from './api';

type Outcome = Awaited<ReturnType<typeof reviewsApi.decideBatch>>;

const verdictWords = { approved: ['Approve', 'Approving…', 'approved'], denied: ['Deny', 'Denying…', 'denied'] } as const;

/**
 * One verdict on the held writes selected in the queue: each is decided on its own (its own audit record, every
 * rule checked for it), and the answer lists those decided and those refused, with why.
 */
export function BatchBar({
  selected,
  shown,
  onSelectAll,
  onSent,
  onDecided,
  describe,
}: {
  selected: string[];
  shown: number;
  /** How a review is named to the person (its operation and agent), while the page knows it. */
  describe: (id: string) => string | undefined;
  onSelectAll: (all: boolean) => void;
  /** Told as the verdict is sent: the page keeps the bar while its verdicts empty the queue. */
  onSent: () => void;
  onDecided: () => void;
}) {
  const { organization } = useSignedIn();
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState<'approved' | 'denied'>();
  const [error, setError] = useState<unknown>();
  const [outcome, setOutcome] = useState<{ verdict: 'approved' | 'denied'; answer: Outcome; names: Map<string, string | undefined> }>();
  // Where approvals must be signed, one passkey assertion covers every selected write's payload.
  const approvalsSigned = organization.approvals_need_passkey;

  async function decide(verdict: 'approved' | 'denied') {
    setBusy(verdict);
    onSent();
    setError(undefined);
    setOutcome(undefined);
    try {
      const answer = await reviewsApi.decideBatch(selected, verdict, comment, approvalsSigned);
      // Named as the cards were when decided: the refused ones may leave the page (decided elsewhere meanwhile).
      setOutcome({ verdict, answer, names: new Map(answer.refused.map((refusal) => [refusal.id, describe(refusal.id)])) });
      setComment('');
      onDecided();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  }

  const allSelected = selected.length === shown;
  return (
    <section className="card batch" aria-label="Decide selected writes">
      {shown > 0 && (
        <div className="batch-bar">
          <label className="choice">
            <input type="checkbox" checked={allSelected} onChange={(event) => onSelectAll(event.target.checked)} />
            <span>Select all {shown} pending shown</span>
          </label>
          <div className="field">
            <label htmlFor="batch-comment">Comment for each (optional)</label>
            <input id="batch-comment" maxLength={2000} value={comment} onChange={(event) => setComment(event.target.value)} />
          </div>
          <div className="action-buttons">
            {(['approved', 'denied'] as const).map((verdict) => (
              <button
                key={verdict}
                type="button"
                className={verdict === 'approved' ? 'button' : 'button danger'}
                disabled={selected.length === 0 || busy !== undefined}
                onClick={() => void decide(verdict)}
              >
                {busy !== verdict
                  ? `${verdictWords[verdict][0]} ${selected.length} selected`
                  : verdict === 'approved' && approvalsSigned
                    ? 'Waiting for your passkey…'
                    : verdictWords[verdict][1]}
              </button>
            ))}
          </div>
        </div>
      )}
      {approvalsSigned && shown > 0 && (
        <p className="hint">Approving asks your passkey to sign once for every selected write: each one's exact payload, the verdict and the time.</p>
      )}
      <FormError error={error} />
      <div role="status" className="batch-outcome">
        {outcome && (
          <>
            <p>
              {outcome.answer.decided.length} {verdictWords[outcome.verdict][2]}
              {outcome.answer.decided.some((review) => review.status === 'pending') &&
                ` (${outcome.answer.decided.filter((review) => review.status === 'pending').length} still wait for more approvals)`}
              {outcome.answer.refused.length > 0 ? `; ${outcome.answer.refused.length} refused:` : '.'}
            </p>
            {outcome.answer.refused.length > 0 && (
              <ul>
                {outcome.answer.refused.map((refusal) => (
                  <li key={refusal.id}>
                    {outcome.names.get(refusal.id) ?? <code>{refusal.id}</code>}: {refusal.message}
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
    </section>
  );
}
