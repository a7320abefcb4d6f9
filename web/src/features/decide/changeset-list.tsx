import { Link } from 'react-router';
import { referencedFields } from '../../lib/changeset-references';
import { ItemHeading } from '../../lib/changeset-item-heading';
import { RecordDiff } from '../../lib/record-diff';
import type { DecisionLink } from './api';

type Changeset = NonNullable<DecisionLink['review']['changeset']>;

/**
 * A held changeset on a decision link's page: what the link decides (all of it), and every item with its decision
 * and record. Rejecting some items is done on the review's card in the console.
 */
export function ChangesetList({ changeset, reviewId }: { changeset: Changeset; reviewId: string }) {
  return (
    <section aria-labelledby="decide-changeset" className="changeset">
      <h2 id="decide-changeset">The {changeset.item_count} writes</h2>
      <p className="hint">
        {changeset.mode === 'divisible' ? (
          <>
            This link decides all {changeset.item_count} together. To reject some items and approve the rest,{' '}
            <Link to={`/reviews/${encodeURIComponent(reviewId)}`}>open the review in the console</Link>.
          </>
        ) : (
          <>All or nothing: approving applies all {changeset.item_count} together in one transaction; denying writes none.</>
        )}
      </p>
      <ol className="changeset-items">
        {changeset.items.map((item) => (
          <li key={item.index} data-item-index={item.index}>
            <ItemHeading item={item} />
            <RecordDiff before={item.before} after={item.after} deleting={item.deleting} shownAs={referencedFields(item.input, item.references)} />
          </li>
        ))}
      </ol>
    </section>
  );
}
