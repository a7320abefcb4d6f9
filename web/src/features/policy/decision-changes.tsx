import { DataTable } from '../../lib/data-table';
import { when } from '../../lib/format';
import type { ChangeCounts, ChangedDecision, DecisionKind } from './api';

const looks: Record<DecisionKind, string> = { allow: 'on', review: 'waiting', deny: 'off' };

/** A decision as a badge: allow, review or deny (in words, the colour only repeats them). */
export function DecisionBadge({ decision }: { decision: string }) {
  const look = looks[decision as DecisionKind] ?? '';
  return <span className={`state ${look}`}>{decision}</span>;
}

/** How many decisions change, by live → draft: "allow → review: 2", most first. */
export function ChangeCountList({ counts, label }: { counts: ChangeCounts; label: string }) {
  // The biggest change first.
  const entries = Object.entries(counts).sort(([a, one], [b, other]) => other - one || (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return null;
  return (
    <ul className="change-counts" aria-label={label}>
      {entries.map(([change, count]) => {
        const [was = change, wouldBe = ''] = change.split('→');
        return (
          <li key={change}>
            <DecisionBadge decision={was} /> → <DecisionBadge decision={wouldBe} />: {count}
          </li>
        );
      })}
    </ul>
  );
}

/** The decisions a draft decides otherwise: when, which write, which key, what it was and would be, and by which rules. */
export function ChangedDecisionsTable({ changes, label }: { changes: ChangedDecision[]; label: string }) {
  return (
    <DataTable label={label} scrollsFromKeyboard columns={['When', 'Operation', 'Key', 'Was → would be', 'Rules']}>
      {changes.map((change) => (
        <tr key={change.decision_id} data-decision-id={change.decision_id}>
          <td className="when">{when(change.at)}</td>
          <td>
            <code>{change.operation}</code>
          </td>
          <td>
            {change.api_key_label}
            <span className="hint block">
              <code>{change.api_key_id}</code>
            </span>
          </td>
          <td className="when">
            <DecisionBadge decision={change.was} /> → <DecisionBadge decision={change.would_be} />
            {change.trust_window_id && <span className="hint block">Held, let through by trust window {change.trust_window_id}</span>}
          </td>
          <td>
            {change.policy_ids.length ? change.policy_ids.map((id) => <code key={id} className="rule-id">{id}</code>) : '—'}
            {change.reason && <span className="hint block">{change.reason}</span>}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
