import { useEffect, useRef, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { policyApi, ruleId, type PolicyVersion, type Shadow, type SuggestedRule } from './api';
import { OrganizationSwitches } from './organization-switches';
import { PolicyEditor } from './policy-editor';
import { PolicyVersions } from './policy-versions';
import { RuleChart } from './rule-chart';
import { ShadowReport } from './shadow-report';
import { SuggestedRules } from './suggested-rules';
import { TrustWindows } from './trust-windows';
import { UndoWindowSetting } from './undo-window-setting';
import './policy.css';

/** Something loaded once for the page, and what went wrong loading it. */
function useLoaded<T>(load: () => Promise<T>): [T | undefined, unknown, (value: T) => void] {
  const [value, setValue] = useState<T>();
  const [error, setError] = useState<unknown>();
  const first = useRef(load);
  useEffect(() => {
    first.current().then(setValue, setError);
  }, []);
  return [value, error, setValue];
}

/**
 * Policy: the Cedar rules in force and their versions; for owners and admins, a draft checked by a dry run over the
 * recorded decisions or in shadow before it is saved, allow rules suggested by the review history, and the
 * organization's switches about approvals and what agents see.
 */
export function PolicyPage() {
  useDocumentTitle('Policy');
  const { can, person } = useSignedIn();
  const canEdit = can('editPolicy');
  const [current, currentError, setCurrent] = useLoaded(policyApi.current);
  const [versions, versionsError, setVersions] = useLoaded(policyApi.versions);
  const [shadow, shadowError, setShadow] = useLoaded<Shadow | null>(policyApi.shadow);
  const [suggestions, suggestionsError] = useLoaded(policyApi.suggestions);
  // The draft starts as the policy in force, until the person changes it.
  const [edited, setDraft] = useState<string>();
  const draft = edited ?? current?.source;
  const [editorStatus, setEditorStatus] = useState<string>();
  const editor = useRef<HTMLTextAreaElement>(null);

  /** Puts text in the draft and the keyboard on it, at its end, saying what happened. */
  function changeDraft(next: string, status: string) {
    setDraft(next);
    setEditorStatus(status);
    requestAnimationFrame(() => {
      const field = editor.current;
      if (!field) return;
      field.focus();
      field.setSelectionRange(field.value.length, field.value.length);
    });
  }

  function addSuggestion(suggestion: SuggestedRule) {
    const base = (draft ?? '').trimEnd();
    changeDraft(
      `${base}${base ? '\n\n' : ''}${suggestion.rule}\n`,
      `Added ${ruleId(suggestion.rule) ?? 'the rule'} to the end of the draft: dry-run it, then save it to adopt it.`,
    );
  }

  function saved(version: PolicyVersion) {
    setCurrent(version);
    setVersions([version, ...(versions ?? []).filter((known) => known.version !== version.version)]);
  }

  return (
    <>
      <h1>Policy</h1>
      <p className="lede">
        The Cedar rules that decide every agent's write: allowed at once, held for a person's review, or denied.{' '}
        {canEdit
          ? 'Check a change against the decisions already made, or run it in shadow beside the policy in force, before you save it.'
          : 'Owners and admins change them.'}
      </p>

      <section className="card" aria-labelledby="in-force-heading">
        <h2 id="in-force-heading">The policy in force{current && `: version ${current.version}`}</h2>
        <FormError error={currentError} />
        {current === undefined ? (
          !currentError && <p role="status">Loading…</p>
        ) : (
          <>
            <p>
              Saved by <strong>{current.created_by}</strong> on {when(current.created_at)}.
            </p>
            {canEdit ? (
              <details className="cedar-details">
                <summary>Its Cedar text</summary>
                <pre className="cedar">{current.source}</pre>
              </details>
            ) : (
              <pre className="cedar">{current.source}</pre>
            )}
          </>
        )}
      </section>

      <RuleChart />

      {canEdit && current && draft !== undefined && (
        <PolicyEditor
          current={current}
          draft={draft}
          onDraftChange={setDraft}
          onSaved={saved}
          onShadowStarted={setShadow}
          status={editorStatus}
          onStatus={setEditorStatus}
          editorRef={editor}
        />
      )}

      {can('readAudit') && <TrustWindows personId={person.id} canCloseAny={can('manageKeys')} />}

      <ShadowReport shadow={shadow} loadError={shadowError} canEdit={canEdit} personId={person.id} onChange={setShadow} />

      <SuggestedRules suggestions={suggestions} loadError={suggestionsError} canEdit={canEdit} draft={draft ?? ''} onAdd={addSuggestion} />

      <PolicyVersions
        versions={versions}
        loadError={versionsError}
        inForce={current?.version}
        canEdit={canEdit}
        onUseAsDraft={(version) =>
          changeDraft(version.source, `Version ${version.version} is in the draft: dry-run it, then save it to make its rules the policy in force again.`)
        }
      />

      {can('manageKeys') && <OrganizationSwitches />}
      {can('manageKeys') && <UndoWindowSetting />}
    </>
  );
}
