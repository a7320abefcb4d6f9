import { useRef, useState } from 'react';
import { Link } from 'react-router';
import { AgentName, agentInWords } from '../../lib/agent-name';
import { ApiError } from '../../lib/api';
import { FormError } from '../../lib/form-error';
import { trustMatchText, when } from '../../lib/format';
import { passkeysPage } from '../../lib/passkeys';
import { useSignedIn } from '../../lib/session';
import { UndoButton } from '../../lib/undo-button';
import { editable, reviewsApi, type Review } from './api';
import { EditForm, itemEdit, writeEdit } from './edit-form';
import { EditSummary } from './edit-summary';
import { ChangesetItems, heldItemsReason } from './changeset-items';
import { RecordDiff } from './record-diff';
import { AgentNotes, Provenance, StaleWarning, useReviewContext } from './review-context';
import { noTrust, TrustOption, trustTerms } from './trust-option';

const statusNames = { pending: 'Pending', approved: 'Approved', denied: 'Denied', expired: 'Expired', withdrawn: 'Withdrawn' } as const;

/** Why a withdrawn write will never run, and who withdrew it, in words. */
function withdrawnSentence(withdrawn: NonNullable<Review['withdrawn']>): string {
  const who = withdrawn.by.type === 'user' ? ` by ${withdrawn.by.name ?? withdrawn.by.id}` : withdrawn.by.type === 'system' ? ' by the operator (CLI)' : ' by the app itself';
  const why = withdrawn.reason === 'connection_ended' ? 'the app that made it was disconnected' : 'the API key that made it was revoked';
  return `Withdrawn${who} ${when(withdrawn.at)}: ${why}. Nothing was written, and nobody can approve it.`;
}

/** One held write: who, what, why it was held, and the decision (for those who may make it). */
export function ReviewCard({
  review,
  onDecided,
  headingLevel = 2,
  selection,
  writes,
}: {
  review: Review;
  onDecided: (review: Review) => void;
  headingLevel?: 2 | 3;
  /** A count the page moves when agents' writes may have changed records (the live `calls` topic): the card on screen checks its record again. */
  writes?: number;
  /** In the queue: whether the card is selected for a batch verdict, and how to change it. */
  selection?: { selected: boolean; onChange: (selected: boolean) => void };
}) {
  const { can, workflow_url_prefix: workflowPrefix, person, organization } = useSignedIn();
  const signed = organization.approvals_need_passkey;
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState<'approve' | 'deny'>();
  const [error, setError] = useState<unknown>();
  const [editing, setEditing] = useState(false);
  /** For a changeset: the item whose edit-then-approve form is open. */
  const [editingItem, setEditingItem] = useState<number>();
  const [trust, setTrust] = useState(noTrust);
  /** For a divisible changeset: the items the reviewer rejects as they approve, with their reasons. */
  const [rejected, setRejected] = useState<Record<number, string>>({});
  const editButton = useRef<HTMLButtonElement>(null);
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const deleting = review.operation.endsWith('.delete') || review.operation.endsWith('.forget');
  const { required, given } = review.approvals;
  const approvedAlready = given.some((approval) => approval.user_id === person.id);
  const mayDecide = review.status === 'pending' && can('decideReviews');
  const mayEdit = mayDecide && editable(review.operation);
  const itemEdited = review.changeset?.items.find((item) => item.index === editingItem);
  // Only the approval that ends the review opens a window (with a quorum, the last one).
  const endsReview = !approvedAlready && given.length + 1 >= required;
  const article = useRef<HTMLElement>(null);
  const { context, onAttention } = useReviewContext(review, { writes, card: article });
  const givenOf = (index: number | null) => context?.given.find((fields) => fields.index === index)?.fields;

  async function decide(verdict: 'approve' | 'deny') {
    setBusy(verdict);
    setError(undefined);
    try {
      onDecided(await reviewsApi.decide(review, verdict, comment, signed, verdict === 'approve' ? { trust: trustTerms(trust), rejected } : {}));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  }

  return (
    <article
      ref={article}
      className="card review"
      aria-labelledby={`review-${review.id}`}
      data-review-id={review.id}
      tabIndex={-1}
      onPointerEnter={onAttention}
      onFocus={onAttention}
    >
      <header className="review-head">
        {selection && review.status === 'pending' && can('decideReviews') && (
          <input
            type="checkbox"
            className="select-review"
            aria-label={`Select ${review.operation} by ${agentInWords(review.submitted_by.api_key_label, review.submitted_by.api_key_label_verified)}`}
            checked={selection.selected}
            onChange={(event) => selection.onChange(event.target.checked)}
          />
        )}
        <Heading id={`review-${review.id}`}>
          <Link to={`/reviews/${review.id}`}>{review.operation}</Link> by{' '}
          <AgentName label={review.submitted_by.api_key_label} verified={review.submitted_by.api_key_label_verified} quoted />
        </Heading>
        <span className={`state ${review.status === 'pending' ? 'waiting' : review.status === 'approved' ? 'on' : 'off'}`}>{statusNames[review.status]}</span>
      </header>
      <p className="hint">
        Over {review.submitted_by.interface.toUpperCase()} · held {when(review.created_at)} · {review.status === 'pending' ? `expires ${when(review.expires_at)}` : `${review.status === 'withdrawn' ? 'withdrawn' : 'decided'} ${when(review.decided_at)}`}
        {workflowPrefix && (
          <>
            {' · '}
            <a href={`${workflowPrefix}${encodeURIComponent(review.workflow_id)}`} target="_blank" rel="noreferrer">
              Workflow in Temporal
            </a>
          </>
        )}
      </p>
      {review.escalation && (
        <p className="escalated">
          <strong>Escalated to {review.escalation.to}</strong> {when(review.escalation.at)}: it waited longer than the organization allows.
        </p>
      )}
      <p>
        <strong>Why it was held:</strong> {review.changeset ? heldItemsReason(review.changeset) : review.policy.reason} <span className="hint">(rule {review.policy.policy_ids.join(', ') || '—'})</span>
      </p>
      {context && <StaleWarning context={context} />}
      {review.edit && <EditSummary review={review} edit={review.edit} />}
      {review.edit && !review.changeset && <p className="hint">The write as edited:</p>}
      {review.changeset ? (
        <ChangesetItems
          changeset={review.changeset}
          reviewId={review.id}
          givenOf={givenOf}
          rejected={mayDecide && review.changeset.mode === 'divisible' ? rejected : undefined}
          onRejected={setRejected}
          onEdit={mayDecide && busy === undefined ? setEditingItem : undefined}
          editor={
            itemEdited && {
              index: itemEdited.index,
              form: (
                <EditForm
                  target={itemEdit(review, itemEdited, comment, signed, rejected)}
                  headingLevel={headingLevel === 2 ? 3 : 4}
                  onApproved={(decided) => {
                    setEditingItem(undefined);
                    onDecided(decided);
                  }}
                  onCancel={() => setEditingItem(undefined)}
                />
              ),
            }
          }
        />
      ) : (
        <RecordDiff before={review.before} after={review.edit?.resource ?? review.resource} deleting={deleting} given={givenOf(null)} />
      )}
      {context && <AgentNotes context={context} agent={review.submitted_by.api_key_label} />}
      {context && <Provenance context={context} />}
      {required > 1 && (
        <div className="approvals">
          <p>
            <strong>
              Approvals: {given.length} of {required}
            </strong>{' '}
            <span className="hint">({required} different people must approve; one deny ends it)</span>
          </p>
          {given.length > 0 && (
            <ul>
              {given.map((approval) => (
                <li key={approval.user_id}>
                  {approval.email} approved {when(approval.at)}
                  {approval.comment ? `: “${approval.comment}”` : ''}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {review.withdrawn && <p role="status">{withdrawnSentence(review.withdrawn)}</p>}
      {review.status !== 'pending' && !review.withdrawn && (
        <p role="status">
          {review.decided_by ? `${statusNames[review.status]} by ${review.decided_by.email}` : statusNames[review.status]}
          {review.comment ? `: “${review.comment}”` : ''}.
          {review.status === 'approved' && (review.applied_at ? ' The write ran.' : review.failure ? ` It could not be applied: ${review.failure.message}` : ' The write is being applied.')}
          {review.undone_by ? ` It was undone (${review.undone_by}).` : ''}
        </p>
      )}
      {review.trust_window && <OpenedWindow review={review} window={review.trust_window} />}
      {review.status === 'approved' && review.undoable_until && !review.undone_by && can('decideReviews') && (
        <UndoButton write={review.workflow_id} what={review.operation} onUndone={(undone) => onDecided({ ...review, undone_by: undone.undone_by, undoable_until: null })} />
      )}
      {review.status === 'pending' && can('decideReviews') && (
        <div className="stack decide">
          <div className="field">
            <label htmlFor={`comment-${review.id}`}>Comment (optional)</label>
            <textarea id={`comment-${review.id}`} data-queue-action="comment" rows={2} maxLength={2000} value={comment} onChange={(event) => setComment(event.target.value)} />
          </div>
          {editing && mayEdit ? (
            <EditForm
              target={writeEdit(review, comment, signed)}
              headingLevel={headingLevel === 2 ? 3 : 4}
              onApproved={(decided) => {
                setEditing(false);
                onDecided(decided);
              }}
              onCancel={() => {
                setEditing(false);
                // Back to the button that opened the form.
                setTimeout(() => editButton.current?.focus());
              }}
            />
          ) : (
            <>
              <FormError error={error} />
              {error instanceof ApiError && error.code === 'no_passkey' && (
                <p>
                  <Link to={passkeysPage}>Add a passkey in Settings → Passkeys</Link>
                </p>
              )}
              {signed && !approvedAlready && (
                <p className="hint">Approving asks your passkey to sign it: this review, the exact write it holds, and the time.</p>
              )}
              {approvedAlready && <p className="hint">You have approved; it waits for {required - given.length} more.</p>}
              {endsReview && !review.changeset && <TrustOption review={review} choice={trust} onChange={setTrust} />}
              <div className="action-buttons">
                <button type="button" className="button" data-queue-action="approve" disabled={busy !== undefined || approvedAlready} onClick={() => void decide('approve')}>
                  {busy === 'approve'
                    ? signed
                      ? 'Waiting for your passkey…'
                      : 'Approving…'
                    : `${Object.keys(rejected).length ? `Approve the other ${review.changeset!.items.length - Object.keys(rejected).length}` : review.changeset ? 'Approve all' : 'Approve'}${required > 1 ? ` (${given.length + (approvedAlready ? 0 : 1)} of ${required})` : ''}`}
                </button>
                {mayEdit && (
                  <button
                    type="button"
                    ref={editButton}
                    data-queue-action="edit"
                    className="button secondary"
                    disabled={busy !== undefined}
                    onClick={() => {
                      setError(undefined);
                      setEditing(true);
                    }}
                  >
                    Edit, then approve
                  </button>
                )}
                <button type="button" className="button danger" data-queue-action="deny" disabled={busy !== undefined} onClick={() => void decide('deny')}>
                  {busy === 'deny' ? 'Denying…' : 'Deny'}
                </button>
              </div>
            </>
          )}
        </div>
      )}
      {review.status === 'pending' && !can('decideReviews') && <p className="hint">Reviewers, admins and owners decide held writes.</p>}
    </article>
  );
}

const windowStates = { open: 'open', expired: 'expired', used_up: 'used up', closed: 'closed' } as const;

/** The trust window the approval opened: its id, what it lets through, its uses and expiry, and where to close it. */
function OpenedWindow({ review, window }: { review: Review; window: NonNullable<Review['trust_window']> }) {
  return (
    <p className="trust-opened" data-trust-window={window.id}>
      <strong>Trust window {window.id}</strong> ({windowStates[window.state]}):{' '}
      <AgentName label={review.submitted_by.api_key_label} verified={review.submitted_by.api_key_label_verified} quoted /> may make {review.operation} writes matching{' '}
      <code>{trustMatchText(window.match)}</code> without review, {window.uses} of {window.max_uses} used, until {when(window.expires_at)}.{' '}
      <Link to="/policy">Trust windows on the Policy page</Link>
    </p>
  );
}
