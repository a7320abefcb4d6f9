import { AgentName } from '../../lib/agent-name';
import { clientIdHost } from '../../lib/client-id';
import type { ConsentRequest } from './api';

/** Only a web address is offered as a link: an app's own word could be a javascript: or data: one. */
function webAddress(uri: string | null): string | null {
  if (!uri) return null;
  try {
    const url = new URL(uri);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * Which app asks, and what of it Gatehouse checked: the host of a metadata document's address proves who the app
 * is; its name, and anything a self-registered app says of itself, are only its own word. The name is said to be
 * so, with where it comes from, and the label its key will have when that is numbered (another key has the name).
 */
export function ClientIdentity({ client }: { client: ConsentRequest['client'] }) {
  const host = client.identified_by === 'metadata_document' ? (clientIdHost(client.id) ?? client.id) : null;
  const website = webAddress(client.uri);
  return (
    <section aria-labelledby="client-heading">
      <h2 id="client-heading">The app</h2>
      <dl className="facts">
        <dt>Name</dt>
        <dd>
          <AgentName label={client.name} verified={false} quoted />
          <span className="hint block">
            {host !== null ? (
              <>
                As its document at <strong>{host}</strong> gives it: the app chose it itself.
              </>
            ) : (
              'As the app gave it when it registered itself: anyone may register any name.'
            )}
          </span>
          {client.listed_as !== client.name && (
            <span className="hint block">
              Another key of this organization is called “{client.name}”: this app will be listed as <strong>“{client.listed_as}”</strong>.
            </span>
          )}
        </dd>
        {host !== null ? (
          <>
            <dt>Identified by</dt>
            <dd>
              <strong className="client-host">{host}</strong>
              <span className="hint block">
                Its details are published at <code className="client-id">{client.id}</code>. That address is what proves who the app is; the name is the app's
                own.
              </span>
            </dd>
          </>
        ) : (
          <>
            <dt>Identified by</dt>
            <dd>
              <span className="state waiting">Unverified</span> It registered itself; Gatehouse cannot vouch for its name.
              <span className="hint block">
                Client id <code className="client-id">{client.id}</code>
              </span>
            </dd>
          </>
        )}
        <dt>Afterwards</dt>
        <dd>
          Will return you to <strong>{client.redirect_host}</strong>
        </dd>
        {website && (
          <>
            <dt>Website</dt>
            <dd>
              {/* Its own word: shown as it is, opened elsewhere so this request stays open. */}
              <a href={website} target="_blank" rel="noopener noreferrer" className="client-id">
                {client.uri}
              </a>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
