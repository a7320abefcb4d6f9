import { useEffect, useRef, useState } from 'react';
import { ConfirmButton } from '../../lib/confirm-button';
import { FormError } from '../../lib/form-error';
import { ShownOnce } from '../../lib/shown-once';
import { useSignedIn } from '../../lib/session';
import { useDocumentTitle } from '../../lib/use-document-title';
import { isConnectedApp, keysApi, type AbilityInfo, type ApiKey } from './api';
import { ApiAccessSwitch } from './api-access-switch';
import { ConnectedAppsTable } from './connected-apps-table';
import { CreateKeyForm } from './create-key-form';
import { KeyBudgetForm } from './key-budget-form';
import { KeysTable } from './keys-table';

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
  // Where the keyboard goes when what it was on goes away (a card closed, a key revoked, an app disconnected).
  const keysHeading = useRef<HTMLHeadingElement>(null);
  const appsHeading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    Promise.all([keysApi.list(), keysApi.abilities(), keysApi.organization()]).then(([list, known, organization]) => {
      setKeys(list);
      setAbilities(known);
      setApiAccess(organization.api_access);
    }, setError);
  }, []);

  const ownKeys = keys?.filter((key) => !isConnectedApp(key)) ?? [];
  const connectedApps = keys?.filter(isConnectedApp) ?? [];
  /** The heading of the table a key is in, where the keyboard goes when its row's card closes or it stops. */
  const homeOf = (key: ApiKey) => (isConnectedApp(key) ? appsHeading : keysHeading);

  /** An answer about a key, into the list; the connection an answer may not carry is kept. */
  const adopt = (changed: ApiKey) => setKeys((list) => list?.map((key) => (key.id === changed.id ? { ...key, ...changed } : key)));

  async function revoke(key: ApiKey) {
    setError(undefined);
    try {
      adopt(await keysApi.revoke(key.id));
      setConfirming(undefined);
      homeOf(key).current?.focus();
    } catch (failure) {
      setError(failure);
    }
  }

  /** A row's buttons: its budgets, and ending it (revoking a key, disconnecting an app: the same for the server). */
  function rowActions(key: ApiKey, verb: 'Revoke' | 'Disconnect') {
    if (key.state === 'revoked') return null;
    return (
      <div className="action-buttons">
        {budgeting !== key.id && (
          <button type="button" className="button secondary small" onClick={() => setBudgeting(key.id)} aria-label={`Set budgets of ${key.label}`}>
            Budgets
          </button>
        )}
        <ConfirmButton
          label={verb}
          accessibleLabel={`${verb} ${key.label}`}
          confirmLabel={`${verb} "${key.label}" now`}
          open={confirming === key.id}
          onOpen={() => setConfirming(key.id)}
          onCancel={() => setConfirming(undefined)}
          onConfirm={() => void revoke(key)}
        />
      </div>
    );
  }

  /** The budgets card of the key being budgeted, under the table it is in. */
  function budgetForm(list: ApiKey[]) {
    const key = list.find((candidate) => candidate.id === budgeting);
    if (!key || !abilities) return null;
    return (
      <div key={key.id} className="card">
        <KeyBudgetForm
          apiKey={key}
          abilities={abilities}
          onSaved={(saved) => {
            adopt(saved);
            setBudgeting(undefined);
            homeOf(key).current?.focus();
          }}
          onCancel={() => {
            setBudgeting(undefined);
            homeOf(key).current?.focus();
          }}
        />
      </div>
    );
  }

  return (
    <>
      <p className="breadcrumbs">Settings › Advanced</p>
      <h1>API keys</h1>
      <p className="lede">Agents, automation and scripts use these keys with the REST API and the MCP server. A key's token is shown once, when it is created. Apps connected through OAuth are listed under the keys.</p>
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
        <p className="hint">Revoking a key stops it at its next request and withdraws its writes still waiting for review: nobody can approve them any more.</p>
        {keys === undefined ? (
          <p role="status">Loading…</p>
        ) : ownKeys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <KeysTable keys={ownKeys} actions={(key) => rowActions(key, 'Revoke')} />
        )}
        {budgetForm(ownKeys)}
      </section>
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading" ref={appsHeading} tabIndex={-1}>
          Connected apps (OAuth)
        </h2>
        <p className="lede">
          Apps such as chat assistants and MCP clients that an owner or admin connected through OAuth. Each acts with the abilities it was given, its writes go through
          the organization's policy like any agent's, and it stops when it is disconnected or its connection ends: its writes still waiting for review are then
          withdrawn.
        </p>
        {keys === undefined ? null : connectedApps.length === 0 ? (
          <p>No apps connected.</p>
        ) : (
          <ConnectedAppsTable apps={connectedApps} actions={(app) => rowActions(app, 'Disconnect')} />
        )}
        {budgetForm(connectedApps)}
      </section>
    </>
  );
}
