import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useLocation, useParams } from 'react-router';
import { AgentName } from '../../lib/agent-name';
import { ApiError } from '../../lib/api';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { when } from '../../lib/format';
import { forgetLinkToken, keptLinkToken, tokenInAddress } from '../../lib/link-token';
import { RecordDiff } from '../../lib/record-diff';
import { useSession } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { decisionLinksApi, type DecisionLink, type DecisionOutcome, type PasskeyAssertion } from './api';
import { ChangesetList } from './changeset-list';
import { decideLink, SignInToApprove } from './sign-in-to-approve';
import { EditedFields } from './edited-fields';

const verbs = { approved: 'Approve', denied: 'Deny' } as const;

/** Why a link can no longer decide, in words. */
function staleMessage(link: DecisionLink): string | null {
  const { review } = link;
  switch (link.state) {
    case 'used':
      return `This link was used already: each decision link decides once. The review is ${review.status}${review.decided_by ? `, decided by ${review.decided_by}` : ''}.`;
    case 'decided':
      return `This review was already ${review.status}${review.decided_by ? ` by ${review.decided_by}` : ''}; nothing is left to decide.`;
    case 'expired':
      return 'This review expired before anyone decided it: nothing was written, and this link no longer works.';
    case 'withdrawn':
      return 'This write was withdrawn before anyone decided it: the API key or the app that made it was revoked. Nothing was written, and this link no longer works.';
    case 'payload_changed':
      return 'The write changed since this link was sent (a reviewer edited it), so this link cannot decide it. Open the review in the console to decide the write it holds now.';
    default:
      return null;
  }
}

/** What came of a confirmed link, in words (`writes`: a changeset's number of writes). */
function outcomeMessage(outcome: DecisionOutcome, writes?: number): { title: string; detail: string } {
  const subject = writes === undefined ? 'write' : 'changeset';
  if (outcome.status === 'denied') return { title: 'Denied', detail: `Nothing was written. The agent is told the ${subject} was denied.` };
  if (outcome.status === 'pending') {
    return {
      title: 'Your approval counts',
      detail: `${outcome.approvals.given} of ${outcome.approvals.required} approvals so far: the ${subject} runs once ${outcome.approvals.required} different people approve it.`,
    };
  }
  if (outcome.failure) {
    return { title: 'Approved, but not applied', detail: `The ${subject} could not be applied${writes === undefined ? '' : ' (none of its writes was)'}: ${outcome.failure.message}` };
  }
  if (outcome.applied) {
    return { title: 'Approved and applied', detail: writes === undefined ? 'The write ran once, as you approved it.' : `All ${writes} writes were applied together, once, as you approved them.` };
  }
  return { title: 'Approved', detail: `The ${subject} is being applied; the review in the console shows its result.` };
}

/** What confirming the link asks of the person, said before they tap (a Deny link, or one the link alone approves: nothing). */
function needsInWords(link: DecisionLink): string | null {
  if (link.confirm_needs === 'passkey') return `Your passkey signs this approval: ${link.organization.name} needs every approval signed with one.`;
  if (link.confirm_needs === 'signed_in') return `You are signed in as ${link.person.email}, as ${link.organization.name} asks for approving from a link.`;
  return null;
}

/**
 * A decision link's page, opened from an email on any device: the held write and one button that confirms the
 * link's verdict. Opening it decides nothing. The token is in the link's fragment (`/decide#…`); a link sent before
 * had it in the path (`/decide/…`), and the page moves it to the fragment before it calls anything. Where the
 * organization asks for the person signed in, an Approve link offers to sign in as them and comes back here.
 */
export function DecidePage() {
  const { token: inPath } = useParams();
  const { hash } = useLocation();
  const { session } = useSession();
  // From the address, else (back from signing in) from this tab, where the page kept it on the way.
  const [token] = useState(() => tokenInAddress(hash, inPath) || keptLinkToken(decideLink));
  const [link, setLink] = useState<DecisionLink>();
  const [linkError, setLinkError] = useState<unknown>(() =>
    token ? undefined : new ApiError(410, 'link_invalid', 'This page needs the link from your email: open it again from there.'),
  );
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [outcome, setOutcome] = useState<DecisionOutcome>();
  /** Waiting for the person's passkey to sign (an organization whose approvals need one). */
  const [signing, setSigning] = useState(false);
  const outcomeHeading = useRef<HTMLHeadingElement>(null);
  const verb = link ? verbs[link.verdict] : 'Decide';
  const changeset = link?.review.changeset;
  // What the link decides, in its heading and button: the write, or the whole changeset.
  const subject = changeset ? 'changeset' : 'write';
  const subjectWhole = changeset ? `all ${changeset.item_count} writes` : 'this write';
  useDocumentTitle(`${verb} a held ${subject}`);

  useEffect(() => {
    if (!token) return;
    // The link's own address, whatever brought the page here: an older link's path, or the way back from signing in.
    window.history.replaceState(window.history.state, '', `/decide#${token}`);
    forgetLinkToken(decideLink);
    decisionLinksApi.read(token).then(setLink, setLinkError);
  }, [token]);

  useEffect(() => {
    if (outcome) outcomeHeading.current?.focus();
  }, [outcome]);

  /**
   * Confirms the link. An organization whose approvals need a passkey refuses the link's word alone
   * (passkey_required, and the link stays usable): the person's passkey signs the verdict first where the link
   * says it needs one, and again when a confirm without one is refused.
   */
  async function confirm() {
    setBusy(true);
    setError(undefined);
    const send = (passkey?: PasskeyAssertion) =>
      decisionLinksApi.confirm(token, { ...(comment.trim() ? { comment: comment.trim() } : {}), ...(passkey ? { passkey } : {}) });
    const signed = async () => {
      setSigning(true);
      return send(await decisionLinksApi.sign(token));
    };
    try {
      try {
        setOutcome(link?.confirm_needs === 'passkey' ? await signed() : await send());
      } catch (failure) {
        if (!(failure instanceof ApiError && failure.code === 'passkey_required')) throw failure;
        setOutcome(await signed());
      }
    } catch (failure) {
      setError(failure);
      // The session ended or changed since the page read the link: read it again, which offers to sign in.
      if (failure instanceof ApiError && (failure.code === 'sign_in_required' || failure.code === 'wrong_person')) {
        decisionLinksApi.read(token).then(setLink, () => undefined);
      }
    } finally {
      setBusy(false);
      setSigning(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void confirm();
  }

  if (linkError) {
    return (
      <main className="narrow decide" id="main">
        <h1>This link does not work</h1>
        <FormError error={linkError instanceof ApiError ? linkError : new ApiError(0, 'network', 'The link could not be read. Try again.')} />
        <p>Open the review in the console instead, or ask for it to be sent again.</p>
      </main>
    );
  }
  // The session too: whether the person is signed in decides what the page offers, and a confirm carries its token.
  if (!link || session === undefined) {
    return (
      <main className="narrow decide" id="main">
        <h1>Decision link</h1>
        <p role="status">Reading the link…</p>
      </main>
    );
  }

  const { review } = link;
  const stale = staleMessage(link);
  const done = outcome && outcomeMessage(outcome, changeset?.item_count);
  const mustSignIn = link.confirm_needs === 'signed_in' && link.session !== 'this_person';
  const needs = needsInWords(link);
  return (
    <main className="narrow decide" id="main">
      <h1>
        {verb} this {subject}?
      </h1>
      <p className="deciding-as">
        You are deciding as <strong>{link.person.email}</strong> in <strong>{link.organization.name}</strong>.
      </p>
      <dl className="facts">
        {changeset ? (
          <>
            <dt>Changeset</dt>
            <dd>{changeset.summary.replace(/^changeset of/, 'A changeset of')}</dd>
          </>
        ) : (
          <>
            <dt>Operation</dt>
            <dd>
              <code>{review.operation}</code>
            </dd>
          </>
        )}
        <dt>Agent</dt>
        <dd>
          <AgentName label={review.agent} verified={review.agent_label_verified} />
        </dd>
        <dt>Why it was held</dt>
        <dd>{review.reason}</dd>
        {review.status === 'pending' && (
          <>
            <dt>Expires</dt>
            <dd>{when(review.expires_at)}</dd>
          </>
        )}
        {review.approvals.required > 1 && (
          <>
            <dt>Approvals</dt>
            <dd>
              {review.approvals.given} of {review.approvals.required}
            </dd>
          </>
        )}
      </dl>
      {review.edit && <EditedFields edit={review.edit} />}
      {changeset && changeset.items.length > 0 && <ChangesetList changeset={changeset} reviewId={review.id} />}
      {review.after && (
        <section aria-labelledby="decide-write">
          <h2 id="decide-write">{review.edit ? 'The write as edited' : 'The write'}</h2>
          <RecordDiff before={review.before} after={review.after} deleting={review.deleting} />
        </section>
      )}
      {done ? (
        <section className="outcome" aria-labelledby="decide-outcome" role="status">
          <h2 id="decide-outcome" ref={outcomeHeading} tabIndex={-1}>
            {done.title}
          </h2>
          <p>{done.detail}</p>
        </section>
      ) : stale ? (
        <p className="error" role="alert">
          {stale}
        </p>
      ) : mustSignIn ? (
        <SignInToApprove link={link} token={token} signedInAs={link.session === 'someone_else' ? session?.person.email : undefined} />
      ) : (
        <form onSubmit={submit} className="stack decide-form" aria-label={`${verb} ${subjectWhole}`}>
          <FormField id="decide-comment" label="Comment (optional)" hint="Kept with your decision in the audit trail.">
            {(control) => <textarea {...control} rows={2} maxLength={2000} value={comment} onChange={(event) => setComment(event.target.value)} />}
          </FormField>
          <FormError error={error} />
          <button type="submit" className={link.verdict === 'denied' ? 'button danger' : 'button'} disabled={busy}>
            {signing ? 'Waiting for your passkey…' : busy ? `${verb === 'Approve' ? 'Approving' : 'Denying'}…` : `${verb} ${subjectWhole}`}
          </button>
          <p className="hint">
            Opening this page decided nothing; only this button does, once.{needs && ` ${needs}`}
          </p>
        </form>
      )}
    </main>
  );
}
