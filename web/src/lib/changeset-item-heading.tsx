import type { ReactNode } from 'react';

// How a changeset's item is named to a person, on a review's card and on a decision link's page.

export const decisionNames = { allow: 'Allowed', review: 'Held', deny: 'Denied' } as const;

/** A changeset item's line: its number (from 1), operation and ref, and the policy's decision with its reason and rules. */
export function ItemHeading({
  item,
  children,
}: {
  item: { index: number; operation: string; ref: string | null; decision: keyof typeof decisionNames; reason: string; policy_ids: string[] };
  children?: ReactNode;
}) {
  return (
    <p>
      <strong>
        {item.index + 1}. {item.operation}
      </strong>
      {item.ref && <span className="hint"> (ref “{item.ref}”)</span>} · {decisionNames[item.decision]}: {item.reason}{' '}
      <span className="hint">(rule {item.policy_ids.join(', ') || '—'})</span>
      {children}
    </p>
  );
}
