import { referencedFields } from '../../lib/changeset-references';
import type { ReactNode } from 'react';
import { when } from '../../lib/format';
import { EditedFieldsTable } from '../../lib/record-diff';
import { editable, type Review } from './api';
import { decisionNames, ItemHeading } from '../../lib/changeset-item-heading';
import { RecordDiff } from './record-diff';

type Changeset = NonNullable<Review['changeset']>;
type Item = Changeset['items'][number];


/** Why a changeset was held: each held item and its reason, numbered from 1 as the list below numbers them. */
export function heldItemsReason(changeset: Changeset): string {
  return changeset.items
    .filter((item) => item.decision === 'review')
    .map((item) => `item ${item.index + 1} (${item.operation}): ${item.reason}`)
    .join('; ');
}

/** A reviewer's edit of one item: who and when, each field the agent's way and the edited way, and the policy's word. */
function ItemEditSummary({ item, edit }: { item: Item; edit: NonNullable<Item['edit']> }) {
  return (
    <div className="edit-summary">
      <p>
        <strong>Edited by {edit.by.email}</strong> {when(edit.at)} · the policy on the edited item: {decisionNames[edit.decision]} — {edit.reason}{' '}
        <span className="hint">(rule {edit.policy_ids.join(', ') || '—'})</span>
      </p>
      <EditedFieldsTable fields={edit.fields.map((field) => ({ field, agent: item.input[field], edited: edit.input[field] }))} />
    </div>
  );
}

/** "Reject this item" on a divisible changeset's item, with the reason once it is ticked. */
function RejectItem({ index, id, rejected, onRejected }: { index: number; id: string; rejected: Record<number, string>; onRejected: (rejected: Record<number, string>) => void }) {
  return (
    <div className="field inline">
      <label>
        <input
          type="checkbox"
          checked={index in rejected}
          onChange={(event) => {
            const next = { ...rejected };
            if (event.target.checked) next[index] = '';
            else delete next[index];
            onRejected(next);
          }}
        />{' '}
        Reject this item
      </label>
      {index in rejected && (
        <>
          <label htmlFor={`${id}-reason`} className="visually-hidden">
            Why item {index + 1} is rejected
          </label>
          <input
            id={`${id}-reason`}
            type="text"
            maxLength={2000}
            placeholder="Why (required)"
            value={rejected[index]}
            onChange={(event) => onRejected({ ...rejected, [index]: event.target.value })}
          />
        </>
      )}
    </div>
  );
}

/**
 * A held changeset's items, in order: each with its own decision, rule and diff, and a reviewer's edit if one was
 * made. For a divisible changeset still pending, a reviewer may reject items (with a reason each) as they approve the
 * rest: `rejected` maps an item's index to the reason typed so far. With `onEdit`, a create or update item can be
 * edited as the changeset is approved: `editor` is the form, shown in the item it edits.
 */
export function ChangesetItems({
  changeset,
  reviewId,
  rejected,
  onRejected,
  onEdit,
  editor,
  givenOf,
}: {
  changeset: Changeset;
  reviewId: string;
  /** For a create item: the fields it was given (the others are folded); undefined while not known. */
  givenOf?: (index: number) => readonly string[] | undefined;
  /** Present when the reviewer may reject items now. */
  rejected?: Record<number, string>;
  onRejected?: (rejected: Record<number, string>) => void;
  /** Present when the reviewer may edit items now: opens the form for one. */
  onEdit?: (index: number) => void;
  editor?: { index: number; form: ReactNode };
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
          const mayReject = item.verdict !== 'rejected' && rejected !== undefined && onRejected !== undefined;
          const mayEdit = onEdit !== undefined && !isRejected && editable(item.operation);
          return (
            <li key={item.index} className={isRejected ? 'rejected' : undefined} data-item-index={item.index}>
              <ItemHeading item={item}>
                {item.verdict === 'rejected' && (
                  <>
                    {' '}
                    · <strong>Rejected</strong>
                    {item.verdict_reason ? `: “${item.verdict_reason}”` : ''}
                  </>
                )}
              </ItemHeading>
              {item.edit && <ItemEditSummary item={item} edit={item.edit} />}
              <RecordDiff
                before={item.before}
                after={item.result && typeof item.result === 'object' ? (item.result as Record<string, unknown>) : (item.edit?.resource ?? item.resource)}
                deleting={deleting}
                given={item.result ? undefined : givenOf?.(item.index)}
                shownAs={referencedFields(item.edit?.input ?? item.input, item.references)}
              />
              {editor?.index === item.index && editor.form}
              {editor?.index !== item.index && (mayEdit || mayReject) && (
                <div className="item-actions">
                  {mayEdit && (
                    <button type="button" className="button secondary" onClick={() => onEdit?.(item.index)}>
                      Edit item {item.index + 1}, then approve
                    </button>
                  )}
                  {mayReject && <RejectItem index={item.index} id={id} rejected={rejected!} onRejected={onRejected!} />}
                </div>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
