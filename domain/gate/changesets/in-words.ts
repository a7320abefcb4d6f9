import type { Review } from '../reviews/schema';
import { changesetOperation } from './schema';

// A held changeset as people are told of it (email, Slack, a decision link's page): how many writes and which,
// each item with its decision. Items are counted from 1 here, as the console's card shows them.

type Changeset = NonNullable<Review['changeset']>;
type Item = Pick<Changeset['items'][number], 'index' | 'ref' | 'operation' | 'decision' | 'reason'>;

const decisionWords = { allow: 'allowed', review: 'held', deny: 'denied' } as const;

/** "changeset of 5 writes". */
export function changesetNoun(count: number): string {
  return `changeset of ${count} write${count === 1 ? '' : 's'}`;
}

/** "tasks.update ×3, tasks.create, bookings.create": each operation once, the most frequent first, then in the order sent. */
export function operationsTally(operations: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const operation of operations) counts.set(operation, (counts.get(operation) ?? 0) + 1);
  return [...counts]
    .sort(([, a], [, b]) => b - a)
    .map(([operation, count]) => (count > 1 ? `${operation} ×${count}` : operation))
    .join(', ');
}

/**
 * What a held write is, in a headline: its operation, or for a changeset "changeset of 5 writes: tasks.update ×3,
 * tasks.create, bookings.create" (`article`: "a changeset …", for "wants to run …"; `parenthesized`: the writes in
 * brackets, for a headline that goes on after them).
 */
export function heldWriteInWords(review: Pick<Review, 'operation' | 'changeset'>, { article = false, parenthesized = false } = {}): string {
  if (review.operation !== changesetOperation || !review.changeset) return review.operation;
  const { items } = review.changeset;
  const tally = operationsTally(items.map((item) => item.operation));
  return `${article ? 'a ' : ''}${changesetNoun(items.length)}${parenthesized ? ` (${tally})` : `: ${tally}`}`;
}

/** "item 2 (tasks.create)". */
export const itemName = (item: Pick<Item, 'index' | 'operation'>) => `item ${item.index + 1} (${item.operation})`;

/** Why a changeset was held: each held item and its reason. */
export function heldItemsReason(changeset: Changeset): string {
  return changeset.items
    .filter((item) => item.decision === 'review')
    .map((item) => `${itemName(item)}: ${item.reason}`)
    .join('; ');
}

/** "1. projects.create (ref proj): allowed — Ordinary writes are allowed", one line an item. */
export function changesetItemLines(changeset: Changeset): string[] {
  return changeset.items.map(
    (item) => `${item.index + 1}. ${item.operation}${item.ref ? ` (ref ${item.ref})` : ''}: ${decisionWords[item.decision]} — ${item.reason}`,
  );
}

/** What approving and denying do to the changeset, in a sentence. */
export function changesetModeInWords(changeset: Changeset): string {
  const count = changeset.items.length;
  return changeset.mode === 'divisible'
    ? `Divisible: approving applies all ${count} together, denying writes none; to reject some items and approve the rest, open the review in the console.`
    : `All or nothing: approving applies all ${count} together in one transaction, denying writes none.`;
}
