import type Provider from 'oidc-provider';
import type { Configuration, errors as LibraryErrorClasses } from 'oidc-provider';
import { checkOutboundUrl, getOutbound, strangersOutbound, type StrangersDocumentRules } from '../../domain/notify/outbound';

// A client may name itself by the https URL of its metadata document (Client ID Metadata Documents): the library
// fetches that URL when the client first comes. Anyone may send any URL, so the fetch goes by rules of its own
// (public addresses only: domain/notify/outbound.ts, StrangersDocumentRules), and whatever goes wrong is answered
// with one error: a refused address, no answer, an answer that is not a 200, not JSON, too big, a document naming
// another client_id or holding metadata refused. Told apart, they would say what answers at an address the api can
// reach and the client cannot.

type LibraryErrors = typeof LibraryErrorClasses;

/** The one description of every failure to use a client's metadata document (error `invalid_client`). */
export const unusableMetadataDocument =
  'The client_id names a metadata document that cannot be used. It must be an https URL on a public address that answers 200 with a JSON object of at most 5 KiB, whose client_id is that URL and whose client metadata is accepted (redirect_uris, client_name, no client secret).';

/** The largest client metadata document read (the library refuses past 5 KiB; this bounds the read itself). */
const metadataDocumentMaxBytes = 64 * 1024;

/** Whether a client id is the address of a metadata document (registered clients' ids are random strings). */
const isDocumentAddress = (id: unknown): boolean => typeof id === 'string' && /^https:\/\//i.test(id);

/** The library's `clientIdMetadataDocument.allowFetch`: the address must resolve to addresses the rules allow. */
export function allowMetadataDocumentFetch(rules: StrangersDocumentRules) {
  const outbound = strangersOutbound(rules);
  return async (_ctx: unknown, clientId: string): Promise<boolean> => {
    try {
      await checkOutboundUrl(clientId, outbound, 'client_id');
      return true;
    } catch {
      return false;
    }
  };
}

/**
 * The library's own requests (it makes none but for metadata documents) go through ours: the rules checked again on
 * the connection itself (a name that resolves elsewhere by then is refused), a size and a time limit, no redirects
 * followed.
 */
export function metadataDocumentFetch(rules: StrangersDocumentRules): Configuration['fetch'] {
  const outbound = strangersOutbound(rules);
  return (async (url: string | URL, init?: { signal?: AbortSignal }) => {
    const fetched = await getOutbound(String(url), {
      policy: outbound,
      timeoutMs: 5_000,
      maxBytes: metadataDocumentMaxBytes,
      headers: { accept: 'application/json' },
      signal: init?.signal,
    });
    const bodyless = [101, 204, 205, 304].includes(fetched.status);
    return new Response(bodyless ? null : new Uint8Array(fetched.body), { status: fetched.status, headers: fetched.headers });
  }) as unknown as Configuration['fetch'];
}

/**
 * Makes every failure to find a client by its metadata document the one `invalid_client` error, wherever the
 * library looks a client up (the authorization, token and revocation endpoints). The cause stays on the error, for
 * the library's debug log, and is never answered.
 */
export function answerOneMetadataDocumentError(provider: Provider, errors: LibraryErrors): void {
  const clients = provider.Client;
  const find = clients.find.bind(clients);
  clients.find = async (id: string) => {
    let found;
    try {
      found = await find(id);
    } catch (error) {
      if (!isDocumentAddress(id)) throw error;
      throw new errors.InvalidClient(unusableMetadataDocument, { cause: error });
    }
    // An https id the library would not even fetch (a fragment, a dot segment, credentials) is no different.
    if (found === undefined && isDocumentAddress(id)) throw new errors.InvalidClient(unusableMetadataDocument);
    return found;
  };
}
