import { referencedFields } from '../../lib/changeset-references';
import { RecordDiff } from './record-diff';
import type { Review } from './api';

type Changeset = NonNullable<Review['changeset']>;

const decisionNames = { allow: 'Allowed', review: 'Held', deny: 'Denied' } as const;

/** Why a changeset was held: each held item and its reason, numbered from 1 as the list below numbers them. */
export function heldItemsReason(changeset: Changeset): string {
  return changeset.items
    .filter((item) => item.decision === 'review')
    .map((item) => `item ${item.index + 1} (${item.operation}): ${item.reason}`)
    .join('; ');
}

/**
 * A held changeset's items, in order: each with its own decision, rule and diff. For a divisible changeset still
 * pending, a reviewer may reject items (with a reason each) as they approve the rest: `rejected` maps an item's
 * index to the reason typed so far.
 */
export function ChangesetItems({
  changeset,
  reviewId,
  rejected,
  onRejected,
}: {
  changeset: Changeset;
  reviewId: string;
  /** Present when the reviewer may reject items now. */
  rejected?: Record<number, string>;
  onRejected?: (rejected: Record<number, string>) => void;
}) {
  return (
    <div className="changeset">
      <p>
        <strong>
          A changeset of {changeset.items.length} writes, {changeset.mode === 'divisible' ? 'divisible' : 'all or nothing'}:
        </strong>{' '}
        <span className="hint">
          {changeset.mode === 'divisible'
            ? 'approving applies every item not rejected, together in one transaction.'
            : 'approving applies every item together in one transaction; denying writes none.'}
        </span>
      </p>
      <ol className="changeset-items">
        {changeset.items.map((item) => {
          const deleting = item.operation.endsWith('.delete') || item.operation.endsWith('.forget');
          const id = `changeset-${reviewId}-item-${item.index}`;
          const isRejected = item.verdict === 'rejected' || (rejected !== undefined && item.index in rejected);
          return (
            <li key={item.index} className={isRejected ? 'rejected' : undefined} data-item-index={item.index}>
              <p>
                <strong>
                  {item.index + 1}. {item.operation}
                </strong>
                {item.ref && <span className="hint"> (ref “{item.ref}”)</span>} · {decisionNames[item.decision]}: {item.reason}{' '}
                <span className="hint">(rule {item.policy_ids.join(', ') || '—'})</span>
                {item.verdict === 'rejected' && (
                  <>
                    {' '}
                    · <strong>Rejected</strong>
                    {item.verdict_reason ? `: “${item.verdict_reason}”` : ''}
                  </>
                )}
              </p>
              <RecordDiff
                before={item.before}
                after={item.result && typeof item.result === 'object' ? (item.result as Record<string, unknown>) : item.resource}
                deleting={deleting}
                shownAs={referencedFields(item.input, item.references)}
              />
              {rejected !== undefined && onRejected && item.verdict !== 'rejected' && (
                <div className="field inline">
                  <label>
                    <input
                      type="checkbox"
                      checked={item.index in rejected}
                      onChange={(event) => {
                        const next = { ...rejected };
                        if (event.target.checked) next[item.index] = '';
                        else delete next[item.index];
                        onRejected(next);
                      }}
                    />{' '}
                    Reject this item
                  </label>
                  {item.index in rejected && (
                    <>
                      <label htmlFor={`${id}-reason`} className="visually-hidden">
                        Why item {item.index + 1} is rejected
                      </label>
                      <input
                        id={`${id}-reason`}
                        type="text"
                        maxLength={2000}
                        placeholder="Why (required)"
                        value={rejected[item.index]}
                        onChange={(event) => onRejected({ ...rejected, [item.index]: event.target.value })}
                      />
                    </>
                  )}
                </div>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
