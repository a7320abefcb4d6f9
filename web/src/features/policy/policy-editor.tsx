import { useEffect, useRef, useState, type RefObject } from 'react';
import { ApiError } from '../../lib/api';
import { FormError } from '../../lib/form-error';
import { FormField } from '../../lib/form-field';
import { policyApi, type PolicyVersion, type Shadow, type Simulation } from './api';
import { ChangeChart } from './change-chart';
import { ChangeCountList, ChangedDecisionsTable } from './decision-changes';

/** The windows a dry run offers here (the API reads any wait, or an instant). */
type SimulationWindow = '24h' | '7d' | '30d';

const windows: { value: SimulationWindow; label: string; words: string }[] = [
  { value: '24h', label: '24 hours', words: 'the last 24 hours' },
  { value: '7d', label: '7 days', words: 'the last 7 days' },
  { value: '30d', label: '30 days', words: 'the last 30 days' },
];

type Action = 'simulate' | 'save' | 'shadow';

/** A dry run's answer, with the draft and window it was for. */
interface DryRun extends Simulation {
  source: string;
  window: SimulationWindow;
}

/** Where Cedar says the draft went wrong ("… at line 3, column 8 …"), and that line of the draft. */
function placeOf(message: string, source: string): { line: number; column: number; text: string } | undefined {
  const found = /at line (\d+), column (\d+)/.exec(message);
  if (!found) return undefined;
  const line = Number(found[1]);
  const column = Number(found[2]);
  const text = source.split('\n')[line - 1];
  return text === undefined ? undefined : { line, column, text };
}

/** The caret's offset in the draft at a line and column (both from 1). */
function offsetOf(source: string, line: number, column: number): number {
  const lines = source.split('\n');
  const before = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
  return Math.min(before + column - 1, source.length);
}

const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/**
 * Owners and admins: the draft in a monospace editor, checked by a dry run over the recorded decisions, saved as a new
 * version, or run in shadow beside the policy in force.
 */
export function PolicyEditor(props: {
  current: PolicyVersion;
  draft: string;
  onDraftChange: (draft: string) => void;
  onSaved: (version: PolicyVersion) => void;
  onShadowStarted: (shadow: Shadow | null) => void;
  /** What the page last said about the draft (a suggested rule added to it, say). */
  status: string | undefined;
  onStatus: (status: string | undefined) => void;
  editorRef: RefObject<HTMLTextAreaElement | null>;
}) {
  const { current, draft, onDraftChange, onSaved, onShadowStarted, status, onStatus, editorRef } = props;
  const [since, setSince] = useState<SimulationWindow>('7d');
  const [comment, setComment] = useState('');
  const [dryRun, setDryRun] = useState<DryRun>();
  const [error, setError] = useState<{ failure: unknown; source: string }>();
  const [busy, setBusy] = useState<Action>();
  // Not disabled while it works: a disabled button drops the keyboard's focus.
  const working = useRef(false);

  const problem = error?.failure instanceof ApiError ? error.failure.fieldProblems().source : undefined;
  const place = problem && error ? placeOf(problem, error.source) : undefined;

  // The keyboard goes to the draft Cedar refused, at the place it names.
  useEffect(() => {
    if (!problem || !error) return;
    const editor = editorRef.current;
    if (!editor) return;
    editor.focus();
    const at = placeOf(problem, error.source);
    if (at && editor.value === error.source) {
      const offset = offsetOf(error.source, at.line, at.column);
      editor.setSelectionRange(offset, offset);
    }
  }, [problem, error, editorRef]);

  async function act(action: Action, work: (source: string) => Promise<void>) {
    if (working.current) return;
    working.current = true;
    setBusy(action);
    setError(undefined);
    onStatus(undefined);
    const source = draft;
    try {
      await work(source);
    } catch (failure) {
      setError({ failure, source });
    } finally {
      working.current = false;
      setBusy(undefined);
    }
  }

  const simulate = () =>
    act('simulate', async (source) => {
      const result = await policyApi.simulate(source, since);
      setDryRun({ ...result, source, window: since });
      const changed = Object.values(result.changed).reduce((sum, count) => sum + count, 0);
      onStatus(`Dry run done: ${changed} of ${plural(result.evaluated, 'decision')} would change.`);
    });

  const save = () =>
    act('save', async (source) => {
      if (source === current.source) {
        onStatus(`The draft is version ${current.version}, the policy in force: there is nothing to save.`);
        return;
      }
      const saved = await policyApi.save(source, comment.trim() || undefined);
      setComment('');
      onSaved(saved);
      onStatus(`Saved as version ${saved.version}: it decides every write from now on.`);
    });

  const runInShadow = () =>
    act('shadow', async (source) => {
      onShadowStarted(await policyApi.startShadow(source));
      onStatus('The draft runs in shadow: every new write is also decided by it, without effect. See where it disagrees under "Shadow".');
    });

  const windowWords = (value: SimulationWindow) => windows.find((option) => option.value === value)?.words ?? value;
  const describedBy = [problem && 'policy-draft-problem', 'policy-draft-hint'].filter(Boolean).join(' ');
  const changedCount = dryRun ? Object.values(dryRun.changed).reduce((sum, count) => sum + count, 0) : 0;

  return (
    <section className="card" aria-labelledby="policy-editor-heading">
      <h2 id="policy-editor-heading">Change the policy</h2>
      <div className="stack">
        <div className="field code-field">
          <label htmlFor="policy-draft">Draft policy (Cedar)</label>
          <span id="policy-draft-hint" className="hint">
            Starts as version {current.version}, the policy in force. Check a change with a dry run over the decisions already made, or run it in shadow
            beside the policy in force; nothing changes until you save it as a new version.
          </span>
          <textarea
            id="policy-draft"
            ref={editorRef}
            className="code"
            rows={Math.min(Math.max(draft.split('\n').length + 1, 12), 30)}
            spellCheck={false}
            autoCapitalize="off"
            autoCorrect="off"
            wrap="off"
            value={draft}
            onChange={(event) => {
              onDraftChange(event.target.value);
              onStatus(undefined);
            }}
            aria-invalid={problem ? true : undefined}
            aria-describedby={describedBy}
          />
          {problem && (
            <div id="policy-draft-problem" className="refused">
              <p className="error">Cedar could not read the draft: {problem}</p>
              {place && (
                <>
                  <p>
                    Line {place.line}, column {place.column}:
                  </p>
                  <pre className="cedar cedar-place">
                    {place.text}
                    <span aria-hidden="true">{`\n${' '.repeat(Math.max(place.column - 1, 0))}^`}</span>
                  </pre>
                </>
              )}
            </div>
          )}
        </div>
        <div className="row draft-options">
          <FormField id="policy-window" label="Dry run over the decisions of">
            {(control) => (
              <select {...control} value={since} onChange={(event) => setSince(event.target.value as SimulationWindow)}>
                {windows.map((option) => (
                  <option key={option.value} value={option.value}>
                    the last {option.label}
                  </option>
                ))}
              </select>
            )}
          </FormField>
          <FormField id="policy-comment" label="Comment (optional)" hint="Why, for the audit trail; saved with the new version.">
            {(control) => <input {...control} maxLength={500} value={comment} onChange={(event) => setComment(event.target.value)} />}
          </FormField>
        </div>
        <div className="action-buttons">
          <button type="button" className="button" aria-busy={busy === 'simulate'} onClick={() => void simulate()}>
            {busy === 'simulate' ? 'Checking…' : 'Check and dry-run'}
          </button>
          <button type="button" className="button" aria-busy={busy === 'save'} onClick={() => void save()}>
            {busy === 'save' ? 'Saving…' : 'Save as new version'}
          </button>
          <button type="button" className="button secondary" aria-busy={busy === 'shadow'} onClick={() => void runInShadow()}>
            {busy === 'shadow' ? 'Starting…' : 'Run in shadow'}
          </button>
        </div>
        <p role="status" className="notice-line">
          {status ?? ''}
        </p>
        {!problem && <FormError error={error?.failure} />}
      </div>
      {dryRun && (
        <section className="dry-run" aria-labelledby="dry-run-heading">
          <h3 id="dry-run-heading">
            Dry run over {windowWords(dryRun.window)}
          </h3>
          {dryRun.source !== draft && <p className="hint">The draft has changed since this dry run: run it again to see what the draft now decides.</p>}
          <p>
            Replayed {plural(dryRun.evaluated, 'recorded decision')}: {changedCount === 0 ? 'none would change.' : `${changedCount} would change.`}
            {dryRun.truncated && ' The window held more decisions than one dry run replays: only the newest were.'}
          </p>
          <ChangeCountList counts={dryRun.changed} label="Changes, by what the policy in force decided and what the draft would" />
          {dryRun.changes.length > 0 && (
            <>
              <ChangeChart counts={dryRun.changed} title="What the draft would change" />
              <ChangedDecisionsTable changes={dryRun.changes} label="Decisions the draft would change, newest first" />
              {dryRun.changes.length < changedCount && (
                <p className="hint">The {dryRun.changes.length} newest are listed; the counts cover all of them.</p>
              )}
            </>
          )}
        </section>
      )}
    </section>
  );
}
