import { useEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../../lib/api';
import { FieldProblem } from '../../lib/field-problem';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { reviewsApi, type Review } from './api';

/** Fields that name the record or guard the write: an edit never changes them. */
const fixedFields = ['id', 'if_match'];
/** Text fields that are long by nature, edited in a text area whatever their length now. */
const longFields = ['description', 'notes', 'body', 'content', 'details', 'summary', 'text'];
/** The name of the "Add a field" row's problems (a field's own name cannot start with a space). */
const addedRow = ' added';

type Kind = 'text' | 'long' | 'date' | 'number' | 'boolean' | 'json';

interface EditableField {
  name: string;
  kind: Kind;
}

/** How a field is edited, from the value the form starts with. */
function kindOf(name: string, value: unknown): Kind {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return 'date';
  if (typeof value === 'string') return longFields.includes(name) || value.length > 80 || value.includes('\n') ? 'long' : 'text';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  return 'json';
}

/** The record's stored order says nothing (PostgreSQL orders a JSON object's keys by length): what names it first, long text last. */
const namingFields = ['title', 'name', 'label', 'subject'];
const rank = ({ name, kind }: EditableField) => (namingFields.includes(name) ? 0 : kind === 'long' ? 3 : kind === 'json' ? 2 : 1);

function draftOf(kind: Kind, value: unknown): string | boolean {
  if (kind === 'boolean') return value === true;
  if (kind === 'text' || kind === 'long' || kind === 'date') return value as string;
  if (kind === 'number') return String(value);
  const compact = JSON.stringify(value ?? null);
  return compact.length > 60 ? JSON.stringify(value, null, 2) : compact;
}

type Parsed = { value: unknown } | { problem: string };

function parse(kind: Kind, draft: string | boolean): Parsed {
  if (kind === 'boolean' || kind === 'text' || kind === 'long' || kind === 'date') return { value: draft };
  const raw = String(draft).trim();
  if (kind === 'number') {
    const value = Number(raw);
    return raw === '' || !Number.isFinite(value) ? { problem: 'Enter a number.' } : { value };
  }
  try {
    return { value: JSON.parse(raw) };
  } catch {
    return { problem: 'This is not valid JSON: text goes in "double quotes", a list in [ ], an object in { }.' };
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const describedBy = (...ids: (string | false)[]) => ids.filter(Boolean).join(' ') || undefined;

/** The API's problems with the edit (`edit.due_on`, `items.0.edit.tags.0` under `at`), by the field they name. */
function problemsOf(error: unknown, at: string, fields: string[], added: string): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  const problems: Record<string, string> = {};
  for (const [path, message] of Object.entries(error.fieldProblems())) {
    const field = path.startsWith(`${at}.`) ? path.slice(at.length + 1).split('.')[0] : undefined;
    if (path === addedRow) problems[addedRow] ??= message;
    else if (field !== undefined && fields.includes(field)) problems[field] ??= message;
    else if (field !== undefined && field === added) problems[addedRow] ??= message;
  }
  return problems;
}

const fieldProblem = (field: string, message: string) => new ApiError(422, 'validation_failed', message, { fields: [{ field, message }] });

/** What an edit-then-approve form edits: a held write, or one item of a held changeset. */
export interface EditTarget {
  /** Makes the form's element ids unique on the page. */
  key: string;
  heading: string;
  /** The version the form starts from: a pending edit (waiting for another approval), or the agent's. */
  start: Record<string, unknown>;
  /** The agent's version: only the fields that differ from it are sent. */
  agents: Record<string, unknown>;
  /** Who made the pending edit the form starts from, if it starts from one. */
  editedBy?: string;
  approvalsGiven: number;
  /** Where the API's answer names this edit's fields: `edit` for a write, `items.0.edit` for a changeset's item. */
  problemsAt: string;
  /** What the review still holds when the policy refuses the edit. */
  holds: string;
  /** Approves with the edit (the fields that differ from the agent's version). */
  send(edit: Record<string, unknown>): Promise<Review>;
}

/** A held write's edit-then-approve: its fields over the agent's input, sent as `edit`. */
export function writeEdit(review: Review, comment: string, signed: boolean): EditTarget {
  return {
    key: review.id,
    heading: 'Edit, then approve',
    start: review.edit?.input ?? review.proposed,
    agents: review.proposed,
    editedBy: review.edit?.by.email,
    approvalsGiven: review.approvals.given.length,
    problemsAt: 'edit',
    holds: "the agent's version",
    send: (edit) => reviewsApi.approveWithEdit(review.id, edit, comment, signed),
  };
}

type ChangesetItem = NonNullable<Review['changeset']>['items'][number];

/**
 * One item of a held changeset's edit-then-approve: its fields over the agent's item, sent as that item's edit
 * (the first of the approval's items, so the answer names its fields `items.0.edit.…`), with the items the reviewer
 * rejects.
 */
export function itemEdit(review: Review, item: ChangesetItem, comment: string, signed: boolean, rejected: Record<number, string>): EditTarget {
  return {
    key: `${review.id}-item-${item.index}`,
    heading: `Edit item ${item.index + 1}, then approve`,
    start: item.edit?.input ?? item.input,
    agents: item.input,
    editedBy: item.edit?.by.email,
    approvalsGiven: review.approvals.given.length,
    problemsAt: 'items.0.edit',
    holds: 'the changeset it held',
    send: (edit) => reviewsApi.approveWithItemEdit(review, { index: item.index, edit }, comment, signed, rejected),
  };
}

/**
 * "Edit, then approve": the proposed write's fields (or a pending edit's), each prefilled and labelled; the fields
 * changed from the agent's version are sent as the edit, which the policy decides again before the write runs.
 */
export function EditForm({
  target,
  headingLevel,
  onApproved,
  onCancel,
}: {
  target: EditTarget;
  headingLevel: 3 | 4;
  onApproved: (review: Review) => void;
  onCancel: () => void;
}) {
  // A pending edit (waiting for a second approval) is where the next one starts; the agent's version otherwise.
  const [start] = useState(() => target.start);
  const [fields] = useState<EditableField[]>(() =>
    Object.keys(start)
      .filter((name) => !fixedFields.includes(name))
      .map((name) => ({ name, kind: kindOf(name, start[name]) }))
      .sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name)),
  );
  const [drafts, setDrafts] = useState<Record<string, string | boolean>>(() => Object.fromEntries(fields.map((field) => [field.name, draftOf(field.kind, start[field.name])])));
  const [added, setAdded] = useState({ name: '', value: '' });
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const Heading = headingLevel === 3 ? 'h3' : 'h4';
  const prefix = `edit-${target.key}`;
  const inputId = (field: string) => `${prefix}-field-${field}`;
  const names = fields.map((field) => field.name);
  const problems = problemsOf(error, target.problemsAt, names, added.name.trim());
  const placed = Object.keys(problems).length > 0;
  const denied = error instanceof ApiError && error.code === 'policy_denied' ? error : undefined;

  // The keyboard starts at the first field; after a refusal, at the first field it names.
  useEffect(() => {
    form.current?.querySelector<HTMLElement>('input, textarea')?.focus();
  }, []);
  useEffect(() => {
    const first = Object.keys(problemsOf(error, target.problemsAt, names, added.name.trim()))[0];
    if (first) document.getElementById(first === addedRow ? `${prefix}-added-value` : inputId(first))?.focus();
    // Only a new error moves the focus.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [error]);

  /** The fields that differ from the agent's version, or where the form cannot read one. */
  function changes(): { edit: Record<string, unknown>; touched: boolean } | ApiError {
    const edit: Record<string, unknown> = {};
    let touched = false;
    for (const field of fields) {
      const parsed = parse(field.kind, drafts[field.name]!);
      if ('problem' in parsed) return fieldProblem(`${target.problemsAt}.${field.name}`, parsed.problem);
      if (!same(parsed.value, start[field.name])) touched = true;
      if (!same(parsed.value, target.agents[field.name])) edit[field.name] = parsed.value;
    }
    const name = added.name.trim();
    if (name) {
      if (fixedFields.includes(name)) return fieldProblem(addedRow, `${name} names the record; it cannot be edited.`);
      if (names.includes(name)) return fieldProblem(addedRow, `${name} is in the form already: change it there.`);
      let value: unknown = added.value;
      try {
        value = JSON.parse(added.value);
      } catch {
        // Not JSON: the text as it is.
      }
      edit[name] = value;
      touched = true;
    } else if (added.value.trim()) {
      return fieldProblem(addedRow, 'Name the field the value is for.');
    }
    return { edit, touched };
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const found = changes();
    if (found instanceof ApiError) return setError(found);
    if (!found.touched) return setError(new ApiError(422, 'nothing_changed', 'You have not changed anything: change a field, or cancel and approve the write as it is.'));
    setBusy(true);
    setError(undefined);
    try {
      onApproved(await target.send(found.edit));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  function field({ name, kind }: EditableField) {
    const id = inputId(name);
    const problem = problems[name];
    const set = (value: string | boolean) => {
      setDrafts((current) => ({ ...current, [name]: value }));
      // What the form said was about the values before this change.
      setError(undefined);
    };
    if (kind === 'boolean') {
      const problemId = `${id}-problem`;
      return (
        <div className="field" key={name}>
          <label className="choice" htmlFor={id}>
            <input
              type="checkbox"
              id={id}
              aria-invalid={problem ? true : undefined}
              aria-describedby={problem !== undefined ? problemId : undefined}
              checked={drafts[name] === true}
              onChange={(event) => set(event.target.checked)}
            />
            <span>{name}</span>
          </label>
          <FieldProblem id={problemId} problem={problem} />
        </div>
      );
    }
    const text = String(drafts[name]);
    const tall = kind === 'long' || (kind === 'json' && text.includes('\n'));
    return (
      <FormField
        key={name}
        id={id}
        label={name}
        className={tall ? 'span' : undefined}
        problem={problem}
        hint={kind === 'json' ? 'JSON: null, a list such as ["a", "b"], or an object' : undefined}
      >
        {(control) =>
          tall ? (
            <textarea {...control} className={kind === 'json' ? 'code' : undefined} rows={Math.min(8, Math.max(3, text.split('\n').length))} value={text} onChange={(event) => set(event.target.value)} />
          ) : (
            <input
              {...control}
              type={kind === 'number' ? 'number' : kind === 'date' ? 'date' : 'text'}
              step={kind === 'number' ? 'any' : undefined}
              className={kind === 'json' ? 'code' : undefined}
              spellCheck={kind === 'json' ? false : undefined}
              value={text}
              onChange={(event) => set(event.target.value)}
            />
          )
        }
      </FormField>
    );
  }

  const addedProblem = problems[addedRow];
  return (
    <form ref={form} className="edit-form stack" aria-labelledby={`${prefix}-heading`} noValidate onSubmit={(event) => void submit(event)}>
      <Heading id={`${prefix}-heading`}>{target.heading}</Heading>
      <p className="hint">
        {target.editedBy ? `Starts from ${target.editedBy}'s edit. ` : 'Starts from what the agent sent. '}
        Only the fields that differ from the agent's version are sent. The policy decides the edited write again before it runs
        {target.approvalsGiven > 0 ? '; the approvals given so far do not carry over to it' : ''}.
      </p>
      <div className="edit-fields">{fields.map(field)}</div>
      <fieldset className="add-field">
        <legend>Add a field the agent did not send (optional)</legend>
        <div className="row">
          <FormField id={`${prefix}-added-name`} label="Field name">
            {(control) => (
              <input
                {...control}
                className="code"
                spellCheck={false}
                maxLength={100}
                value={added.name}
                onChange={(event) => {
                  setAdded({ ...added, name: event.target.value });
                  setError(undefined);
                }}
                aria-invalid={addedProblem && !added.name.trim() ? true : undefined}
              />
            )}
          </FormField>
          {/* The row's problem and hint are about both fields: they stand under the row, the value points at them. */}
          <FormField id={`${prefix}-added-value`} label="Value">
            {(control) => (
              <input
                {...control}
                value={added.value}
                onChange={(event) => {
                  setAdded({ ...added, value: event.target.value });
                  setError(undefined);
                }}
                aria-invalid={addedProblem ? true : undefined}
                aria-describedby={describedBy(addedProblem !== undefined && `${prefix}-added-problem`, `${prefix}-added-hint`)}
              />
            )}
          </FormField>
        </div>
        <FieldProblem id={`${prefix}-added-problem`} problem={addedProblem} />
        <span id={`${prefix}-added-hint`} className="hint block">
          Read as JSON when it is (42, true, null, ["a"]), as text otherwise; e.g. due_on and 2026-12-01.
        </span>
      </fieldset>
      {denied ? (
        <div className="refused" role="alert">
          <p>
            <strong>The policy refused this edit:</strong> {String(denied.details?.reason ?? denied.message)}
            {Array.isArray(denied.details?.policy_ids) && denied.details.policy_ids.length > 0 && (
              <span className="hint"> (rule {denied.details.policy_ids.join(', ')})</span>
            )}
          </p>
          <p>Nothing was written, and the review still waits with {target.holds}: change the edit, or approve or deny it as it is.</p>
        </div>
      ) : (
        !placed && <FormError error={error} />
      )}
      <div className="action-buttons">
        <button type="submit" className="button" disabled={busy}>
          {busy ? 'Approving…' : 'Approve with changes'}
        </button>
        <button type="button" className="button secondary" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
