import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { AgentName } from '../../lib/agent-name';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import type { NeedsAPerson as Need, Overview } from './api';

const kindNames: Record<Need['kind'], string> = {
  queue_full: 'Queue full',
  organization_at_budget: 'Daily budget used',
  webhook_switched_off: 'Webhook off',
  key_at_budget: 'Key at its budget',
  review_escalated: 'Escalated',
};

/** A thing to fix, in words, its subject linking to where it is fixed (when the person may go there). */
function NeedItem({ need, timezone }: { need: Need; timezone: string }) {
  const { can } = useSignedIn();
  const orAsk = (allowed: boolean, link: ReactNode, subject: ReactNode) => (allowed ? link : subject);
  let text: ReactNode;
  switch (need.kind) {
    case 'queue_full':
      text = (
        <>
          <Link to="/reviews">The review queue</Link> is full: {need.pending} writes wait, the plan's cap is {need.cap}. Writes the policy would hold are refused
          until reviewers work the queue.
        </>
      );
      break;
    case 'organization_at_budget':
      text = (
        <>
          The organization used its daily budget of {need.limit} requests{need.used > need.limit ? ` (${need.used - need.limit} more refused)` : ''}: keys
          are refused until midnight in {timezone}.{' '}
          <Link to="/agents">See which agents used it</Link>
        </>
      );
      break;
    case 'webhook_switched_off': {
      const subject = need.url ? <code>{need.url}</code> : 'A webhook endpoint';
      text = (
        <>
          {orAsk(can('manageWebhooks'), <Link to="/settings/advanced/webhooks">{subject}</Link>, subject)}: {need.reason} (since {when(need.since)}).
          {can('manageWebhooks') ? ' Fix the receiver, then switch it back on.' : ' An owner or admin can switch it back on.'}
        </>
      );
      break;
    }
    case 'key_at_budget': {
      const subject = (
        <strong>
          <AgentName label={need.label} verified={need.label_verified} />
        </strong>
      );
      text = (
        <>
          {orAsk(can('manageKeys'), <Link to="/settings/advanced/api-keys">{subject}</Link>, subject)}{' '}
          {need.budget === 'requests' ? (
            <>used its daily budget of {need.limit} requests</>
          ) : (
            <>
              used its daily cap of {need.limit} <code>{need.operation}</code> writes
            </>
          )}
          {need.used > need.limit ? ` (${need.used - need.limit} more refused)` : ''}; it is refused until midnight.
          {can('manageKeys') ? '' : ' An owner or admin can change its budgets.'}
        </>
      );
      break;
    }
    case 'review_escalated':
      text = (
        <>
          <Link to={`/reviews/${encodeURIComponent(need.review_id)}`}>
            <code>{need.operation}</code> by <AgentName label={need.api_key_label} verified={need.api_key_label_verified} />
          </Link>{' '}
          has waited since {when(need.held_at)}, past the escalation wait; it expires {when(need.expires_at)}.
        </>
      );
      break;
  }
  return (
    <li data-need={need.kind}>
      <span className={`state ${need.kind === 'review_escalated' || need.kind === 'key_at_budget' ? 'waiting' : 'off'}`}>{kindNames[need.kind]}</span> {text}
    </li>
  );
}

/** What a person has to do: an endpoint switched off, a key at its budget, a review waiting too long; or nothing. */
export function NeedsAPerson({ overview }: { overview: Overview }) {
  const needs = overview.needs_a_person;
  return (
    <section className={`card needs${needs.length ? ' needs-some' : ''}`} aria-labelledby="needs-heading">
      <h2 id="needs-heading">Needs a person</h2>
      {needs.length ? (
        <ul className="needs-list">
          {needs.map((need) => (
            <NeedItem key={needKey(need)} need={need} timezone={overview.timezone} />
          ))}
        </ul>
      ) : (
        <p className="nothing-needed">
          <span className="state on">All clear</span> Nothing needs you: no endpoint is switched off, no key is at its budget, no review waited past its escalation.
        </p>
      )}
    </section>
  );
}

function needKey(need: Need): string {
  switch (need.kind) {
    case 'queue_full':
    case 'organization_at_budget':
      return need.kind;
    case 'webhook_switched_off':
      return `${need.kind}:${need.endpoint_id}`;
    case 'key_at_budget':
      return `${need.kind}:${need.api_key_id}:${need.operation ?? ''}`;
    case 'review_escalated':
      return `${need.kind}:${need.review_id}`;
  }
}
