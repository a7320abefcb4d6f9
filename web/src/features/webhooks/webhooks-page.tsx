import { useCallback, useEffect, useRef, useState } from 'react';
import { FormError } from '../../lib/form-error';
import { ShownOnce } from '../../lib/shown-once';
import { useDocumentTitle } from '../../lib/use-document-title';
import { webhooksApi, type EventTypeInfo, type WebhookEndpoint } from './api';
import { AddEndpointForm } from './add-endpoint-form';
import { DeliveryLog } from './delivery-log';
import { EndpointsTable, type EndpointActions } from './endpoints-table';

/** Settings → Advanced → Webhooks: where Gatehouse tells the organization's own systems what happened. */
export function WebhooksPage() {
  useDocumentTitle('Webhooks');
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[]>();
  const [eventTypes, setEventTypes] = useState<EventTypeInfo[]>();
  const [added, setAdded] = useState<{ endpoint: WebhookEndpoint; secret: string }>();
  const [openLog, setOpenLog] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  // Where the keyboard goes when what it was on goes away (the secret put away, an endpoint deleted, the log closed).
  const endpointsHeading = useRef<HTMLHeadingElement>(null);
  const logButtons = useRef(new Map<string, HTMLButtonElement>());
  const rememberLogButton = useCallback((id: string, button: HTMLButtonElement | null) => {
    if (button) logButtons.current.set(id, button);
    else logButtons.current.delete(id);
  }, []);

  useEffect(() => {
    Promise.all([webhooksApi.list(), webhooksApi.eventTypes()]).then(([list, types]) => {
      setEndpoints(list);
      setEventTypes(types);
    }, setError);
  }, []);

  const replace = (changed: WebhookEndpoint) => setEndpoints((list) => list?.map((endpoint) => (endpoint.id === changed.id ? changed : endpoint)));

  async function act(work: () => Promise<void>) {
    setError(undefined);
    setNotice(undefined);
    try {
      await work();
    } catch (failure) {
      setError(failure);
    }
  }

  const actions: EndpointActions = {
    openLog,
    toggleLog: (endpoint) => setOpenLog((open) => (open === endpoint.id ? undefined : endpoint.id)),
    setEnabled: (endpoint, enabled) =>
      act(async () => {
        replace(await webhooksApi.setEnabled(endpoint.id, enabled));
        setNotice(enabled ? `${endpoint.url} is switched on: events are sent to it again.` : `${endpoint.url} is switched off: nothing is sent to it until it is switched on.`);
      }),
    remove: (endpoint) =>
      act(async () => {
        await webhooksApi.remove(endpoint.id);
        setEndpoints((list) => list?.filter((candidate) => candidate.id !== endpoint.id));
        if (openLog === endpoint.id) setOpenLog(undefined);
        setNotice(`${endpoint.url} is deleted, with its delivery log.`);
        endpointsHeading.current?.focus();
      }),
  };
  const logged = endpoints?.find((endpoint) => endpoint.id === openLog);

  return (
    <>
      <p className="breadcrumbs">Settings › Advanced</p>
      <h1>Webhooks</h1>
      <p className="lede">
        Gatehouse POSTs events to these endpoints as they happen: writes held, decided, applied or denied, keys and policy changed. Each request is signed by
        the Standard Webhooks scheme with the endpoint's secret, shown once, when the endpoint is added.
      </p>
      {added && (
        <ShownOnce
          id="new-secret-heading"
          title={`Endpoint ${added.endpoint.url} added`}
          secret={added.secret}
          secretLabel="The new endpoint's signing secret"
          copyLabel="Copy secret"
          dismissLabel="I have stored it"
          onDismiss={() => setAdded(undefined)}
          returnFocus={endpointsHeading}
        >
          <p>Copy its signing secret now: it is shown this once and cannot be shown again.</p>
          <p>
            Each request carries the headers <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code>. The receiver checks them
            against the raw body with this secret, for example with the <code>standardwebhooks</code> package:{' '}
            <code>new Webhook(secret).verify(body, headers)</code>. The <code>webhook-id</code> is the same on every retry and redelivery of an event.
          </p>
        </ShownOnce>
      )}
      {eventTypes && (
        <section className="card">
          <AddEndpointForm
            eventTypes={eventTypes}
            onAdded={(endpoint, secret) => {
              setAdded({ endpoint, secret });
              setEndpoints((list) => [...(list ?? []), endpoint]);
            }}
          />
        </section>
      )}
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading" ref={endpointsHeading} tabIndex={-1}>
          Endpoints
        </h2>
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        <FormError error={error} />
        {endpoints === undefined ? (
          !error && <p role="status">Loading…</p>
        ) : endpoints.length === 0 ? (
          <p>No endpoints yet.</p>
        ) : (
          <EndpointsTable endpoints={endpoints} actions={actions} rememberLogButton={rememberLogButton} />
        )}
      </section>
      {logged && (
        <DeliveryLog
          key={logged.id}
          endpoint={logged}
          onClose={() => {
            setOpenLog(undefined);
            logButtons.current.get(logged.id)?.focus();
          }}
        />
      )}
    </>
  );
}
