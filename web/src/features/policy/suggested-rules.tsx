import { FormError } from '../../lib/form-error';
import { day } from '../../lib/format';
import { ruleId, type SuggestedRule } from './api';

/** What the write was: "tasks.update changing only status". */
const writeOf = (suggestion: SuggestedRule) =>
  suggestion.changed_fields ? `${suggestion.operation} changing only ${suggestion.changed_fields.join(', ')}` : suggestion.operation;

/** The evidence in a sentence: how many approved, over which days, none denied, and which rules held them. */
function evidenceOf(suggestion: SuggestedRule): string {
  const { approved, first_at, last_at } = suggestion.evidence;
  const between = day(first_at) === day(last_at) ? `on ${day(first_at)}` : `between ${day(first_at)} and ${day(last_at)}`;
  const key = suggestion.api_key_id ? `, all made with key ${suggestion.api_key_id}` : '';
  return `People approved all ${approved} ${writeOf(suggestion)} ${between}${key}, none denied; held by ${suggestion.held_by.join(', ')}.`;
}

/**
 * Allow rules proposed from the writes people approved every time. A person adopts one: added to the draft, it is
 * dry-run and saved like any change; nothing is saved by itself.
 */
export function SuggestedRules(props: {
  suggestions: SuggestedRule[] | undefined;
  loadError: unknown;
  /** Owners and admins add a rule to their draft; the others read. */
  canEdit: boolean;
  draft: string;
  onAdd: (suggestion: SuggestedRule) => void;
}) {
  const { suggestions, loadError, canEdit, draft, onAdd } = props;
  return (
    <section className="card" aria-labelledby="suggestions-heading">
      <h2 id="suggestions-heading">Suggested rules</h2>
      <p className="hint">
        Allow rules proposed from the last 90 days of reviews: each kind of held write that people approved at least 10 times and never denied. Adopting one
        is a person's decision: {canEdit ? 'add it to the draft, dry-run it, and save it.' : 'an owner or an admin adds it to the policy.'}
      </p>
      <FormError error={loadError} />
      {suggestions === undefined ? (
        !loadError && <p role="status">Loading…</p>
      ) : suggestions.length === 0 ? (
        <p>No suggestions: no kind of held write has been approved often enough, every time, to propose letting it through.</p>
      ) : (
        <ul className="plain-list">
          {suggestions.map((suggestion) => {
            const id = ruleId(suggestion.rule) ?? suggestion.operation;
            const headingId = `suggestion-${id}`;
            const inDraft = draft.includes(suggestion.rule);
            return (
              <li key={suggestion.rule}>
                <article aria-labelledby={headingId}>
                  <h3 id={headingId} className="suggestion-title">
                    Allow <code>{writeOf(suggestion)}</code>
                  </h3>
                  <p>{evidenceOf(suggestion)}</p>
                  <pre className="cedar">{suggestion.rule}</pre>
                  {canEdit &&
                    (inDraft ? (
                      <p className="hint">In the draft: dry-run it, then save it to adopt it.</p>
                    ) : (
                      <button type="button" className="button secondary small" aria-label={`Add to draft: ${id}`} onClick={() => onAdd(suggestion)}>
                        Add to draft
                      </button>
                    ))}
                </article>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
