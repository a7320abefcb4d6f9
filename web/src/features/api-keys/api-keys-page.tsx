import { useEffect, useRef, useState } from 'react';
import { ConfirmButton } from '../../lib/confirm-button';
import { actionsColumn, DataTable } from '../../lib/data-table';
import { FormError } from '../../lib/form-error';
import { ShownOnce } from '../../lib/shown-once';
import { day, when } from '../../lib/format';
import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { keysApi, type AbilityInfo, type ApiKey } from './api';
import { ApiAccessSwitch } from './api-access-switch';
import { CreateKeyForm } from './create-key-form';
import { budgetSummary, KeyBudgetForm } from './key-budget-form';

/** Settings → Advanced → API Keys. */
export function ApiKeysPage() {
  useDocumentTitle('API keys');
  const { refresh } = useSignedIn();
  const [keys, setKeys] = useState<ApiKey[]>();
  const [abilities, setAbilities] = useState<AbilityInfo[]>();
  const [apiAccess, setApiAccess] = useState<boolean>();
  const [created, setCreated] = useState<{ key: ApiKey; token: string }>();
  const [confirming, setConfirming] = useState<string>();
  const [budgeting, setBudgeting] = useState<string>();
  const [error, setError] = useState<unknown>();
  // Where the keyboard goes when what it was on goes away (a card closed, a key revoked).
  const keysHeading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    Promise.all([keysApi.list(), keysApi.abilities(), keysApi.organization()]).then(([list, known, organization]) => {
      setKeys(list);
      setAbilities(known);
      setApiAccess(organization.api_access);
    }, setError);
  }, []);

  async function revoke(id: string) {
    setError(undefined);
    try {
      const revoked = await keysApi.revoke(id);
      setKeys((list) => list?.map((key) => (key.id === id ? revoked : key)));
      setConfirming(undefined);
      keysHeading.current?.focus();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <>
      <p className="breadcrumbs">Settings › Advanced</p>
      <h1>API keys</h1>
      <p className="lede">Agents, automation and scripts use these keys with the REST API and the MCP server. A key's token is shown once, when it is created.</p>
      <FormError error={error} />
      {apiAccess !== undefined && (
        <section className="card">
          <ApiAccessSwitch
            on={apiAccess}
            onChange={(on) => {
              setApiAccess(on);
              void refresh();
            }}
          />
        </section>
      )}
      {created && (
        <ShownOnce
          id="new-token-heading"
          title={`Key "${created.key.label}" created`}
          secret={created.token}
          secretLabel="The new key's token"
          copyLabel="Copy token"
          dismissLabel="I have stored it"
          onDismiss={() => setCreated(undefined)}
          returnFocus={keysHeading}
        >
          <p>Copy its token now: it is shown this once and cannot be shown again.</p>
        </ShownOnce>
      )}
      {abilities && (
        <section className="card">
          <CreateKeyForm
            abilities={abilities}
            onCreated={(key, token) => {
              setCreated({ key, token });
              setKeys((list) => [...(list ?? []), key]);
            }}
          />
        </section>
      )}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading" ref={keysHeading} tabIndex={-1}>
          Keys
        </h2>
        {keys === undefined ? (
          <p role="status">Loading…</p>
        ) : keys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <DataTable columns={['Label', 'Access', 'Created', 'Last used', 'Expires', 'State', 'Own budget', actionsColumn]}>
            {keys.map((key) => (
              <tr key={key.id}>
                <th scope="row">
                  {key.label}
                  <span className="hint block">
                    <code>{key.id}</code> · {key.abilities.length} abilities
                  </span>
                </th>
                <td>{key.access === 'read' ? 'Read only' : 'Read and write'}</td>
                <td>
                  {day(key.created_at)}
                  <span className="hint block">by {key.created_by?.email ?? 'the command line'}</span>
                </td>
                <td>{when(key.last_used_at, 'Never')}</td>
                <td>{day(key.expires_at, 'Never')}</td>
                <td>
                  <span className={`state ${key.state === 'active' ? 'on' : 'off'}`}>{key.state === 'active' ? 'Active' : key.state === 'expired' ? 'Expired' : 'Revoked'}</span>
                </td>
                <td>{budgetSummary(key)}</td>
                <td>
                  <div className="action-buttons">
                    {key.state !== 'revoked' && budgeting !== key.id && (
                      <button type="button" className="button secondary small" onClick={() => setBudgeting(key.id)} aria-label={`Set budgets of ${key.label}`}>
                        Budgets
                      </button>
                    )}
                    {key.state !== 'revoked' && (
                      <ConfirmButton
                        label="Revoke"
                        accessibleLabel={`Revoke ${key.label}`}
                        confirmLabel={`Revoke "${key.label}" now`}
                        open={confirming === key.id}
                        onOpen={() => setConfirming(key.id)}
                        onCancel={() => setConfirming(undefined)}
                        onConfirm={() => void revoke(key.id)}
                      />
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        {abilities &&
          keys
            ?.filter((key) => key.id === budgeting)
            .map((key) => (
              <div key={key.id} className="card">
                <KeyBudgetForm
                  apiKey={key}
                  abilities={abilities}
                  onSaved={(saved) => {
                    setKeys((list) => list?.map((candidate) => (candidate.id === saved.id ? saved : candidate)));
                    setBudgeting(undefined);
                    keysHeading.current?.focus();
                  }}
                  onCancel={() => {
                    setBudgeting(undefined);
                    keysHeading.current?.focus();
                  }}
                />
              </div>
            ))}
      </section>
    </>
  );
}
