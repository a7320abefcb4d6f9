// The console's one API client: the console's routes under /console/api, the JSON envelope, and the session's
// cross-site request token on every call that changes something. The envelope is read the same way for the few
// same-origin routes outside /console/api that the console calls (OAuth's consent, features/connect).

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** Per-field problems of a validation_failed answer, by field name. */
  fieldProblems(): Record<string, string> {
    const fields = (this.details?.fields ?? []) as { field: string; message: string }[];
    return Object.fromEntries(fields.map((problem) => [problem.field, problem.message]));
  }
}

let csrfToken: string | undefined;

/** Set when the session is known; sent as X-CSRF-Token with every POST, PATCH and DELETE. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Told when an answer says the session is gone, so the app can send the person to sign in. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(listener: () => void): void {
  onSignedOut = listener;
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** A page of a list, and the cursor of the next one (null on the last). */
export interface ListPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** A query string of the parameters that have a value (an empty filter is left out). */
export function queryString(parameters: Record<string, string | number | null | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined && value !== null && value !== '') query.set(name, String(value));
  return query.toString();
}

export async function request<T>(method: Method, path: string, body?: unknown, options: { background?: boolean } = {}): Promise<T> {
  return (await exchange<T>(method, path, body, options)).data;
}

async function exchange<T>(method: Method, path: string, body?: unknown, options: { background?: boolean } = {}): Promise<Envelope<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  // A refresh the page makes by itself is not the person's activity: it does not keep an idle session alive.
  if (options.background) headers['x-gatehouse-background'] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  return exchangeJson<T>(`/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }, { tellsSignedOut: !path.startsWith('/session') });
}

/** A success's envelope: its data, and a list's cursor of the next page. */
export interface Envelope<T> {
  data: T;
  page?: { next_cursor: string | null };
}

/**
 * One call to a JSON route of this origin (the console's, or another that answers in the same envelope, such as
 * OAuth's consent): the session's cookie goes with it, a failure comes back as an ApiError. A 401 tells the app
 * the session is gone, unless the call is the session's own (`tellsSignedOut: false`).
 */
export async function exchangeJson<T>(url: string, init: { method: Method; headers: Record<string, string>; body?: string }, options: { tellsSignedOut?: boolean } = {}): Promise<Envelope<T>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network', 'The service could not be reached. Check your connection and try again.');
  }
  const envelope = (await response.json().catch(() => null)) as
    | ({ success: true } & Envelope<T>)
    | { success: false; error: { code: string; message: string; details?: Record<string, unknown> } }
    | null;
  if (envelope?.success) return envelope;
  const error = envelope?.error ?? { code: 'internal_error', message: `The service answered ${response.status}` };
  if (response.status === 401 && (options.tellsSignedOut ?? true)) onSignedOut();
  throw new ApiError(response.status, error.code, error.message, error.details);
}

export const api = {
  get: <T>(path: string, options?: { background?: boolean }) => request<T>('GET', path, undefined, options),
  /** A list's page with the cursor of the next (`?cursor=` on the same path). */
  page: async <T>(path: string, options?: { background?: boolean }): Promise<ListPage<T>> => {
    const { data, page } = await exchange<T[]>('GET', path, undefined, options);
    return { items: data, nextCursor: page?.next_cursor ?? null };
  },
  post: <T>(path: string, body: unknown = {}) => request<T>('POST', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  /** A DELETE, with a JSON body where the route asks for one (a passkey's removal takes the person's password). */
  delete: <T>(path: string, body?: unknown) => request<T>('DELETE', path, body),
};
