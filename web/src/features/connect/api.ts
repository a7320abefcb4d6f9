import { ApiError, exchangeJson } from '../../lib/api';
import type { Role } from '../../lib/session';

// OAuth's consent: an app (an MCP client) asks to act in the person's organization, and the person connects it or
// denies it. These routes belong to the authorization server under /oauth, not to the console's API, so their
// types are written here from its contract rather than generated from the catalog.

export type Access = 'read' | 'read_write';

export interface ConsentRequest {
  client: {
    /** For a client identified by its metadata document, the document's https address. */
    id: string;
    /** The name it gave itself (its metadata document's client_name, or what it registered with): nobody verified it. */
    name: string;
    /** The label its key would have: its name, numbered when another key of the organization has that label. */
    listed_as: string;
    uri: string | null;
    identified_by: 'metadata_document' | 'registration';
    /** Where the browser goes back to, connected or denied. */
    redirect_host: string;
  };
  organization: { slug: string; name: string };
  person: { email: string; name: string | null; role: Role };
  /** The abilities (scopes) the app asked for. */
  requested: { abilities: string[] };
  /** Every ability the organization knows, to say what the requested ones allow. */
  abilities: { ability: string; family: string; description: string; write: boolean }[];
  /** Owners and admins only connect apps. */
  may_consent: boolean;
  /** Who may, for a person who may not. */
  consenters: { name: string | null; email: string; role: string }[];
  lasts_days: { options: number[]; default: number };
  csrf_token: string;
}

export interface ConsentChoice {
  access: Access;
  abilities: string[];
  lasts_days: number;
}

/** Where the browser goes next: back to the app, with its code or its refusal. */
export interface Return {
  redirect_to: string;
}

const interactionPath = (uid: string) => `/oauth/interaction/${encodeURIComponent(uid)}`;

/** An unknown request is one that expired or was answered already: said so, with what to do about it. */
function sayExpired(error: unknown): never {
  if (error instanceof ApiError && error.status === 404) {
    throw new ApiError(404, error.code, 'This connection request has expired or was already used. Start again from the app that sent you here.', error.details);
  }
  throw error;
}

async function get<T>(path: string): Promise<T> {
  return (await exchangeJson<T>(path, { method: 'GET', headers: { accept: 'application/json' } }).catch(sayExpired)).data;
}

/** The request's own cross-site token goes with an answer (not the console session's). */
async function post<T>(path: string, csrfToken: string, body: unknown): Promise<T> {
  const headers = { accept: 'application/json', 'content-type': 'application/json', 'x-csrf-token': csrfToken };
  return (await exchangeJson<T>(path, { method: 'POST', headers, body: JSON.stringify(body) }).catch(sayExpired)).data;
}

export const connectApi = {
  request: (uid: string) => get<ConsentRequest>(`${interactionPath(uid)}/details`),
  consent: (uid: string, csrfToken: string, choice: ConsentChoice) => post<Return>(`${interactionPath(uid)}/consent`, csrfToken, choice),
  deny: (uid: string, csrfToken: string) => post<Return>(`${interactionPath(uid)}/deny`, csrfToken, {}),
};
