import type Provider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';

// OAuth sends an authorization request's error (a scope or resource it may not have, no PKCE, prompt=none…) back
// to the client's redirect URI, at once, with no person seeing anything (RFC 6749 §4.1.2.1). A client that
// registered itself chose that URI itself, unverified: answered so, the authorization endpoint would send anyone's
// browser wherever such a client said (an open redirector, RFC 9700 §4.11.2). Its errors are shown on a page
// instead. A client identified by its metadata document keeps the standard redirect: its redirect URIs are those the
// document at its https host lists, and that host is its identity, named in the request itself.
//
// After the authorization request, what the person answers on the consent page (a refusal is access_denied) goes
// back to any client: it must learn it, and the person saw whom it was sent to.

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

type ErrorOut = Parameters<Configuration['renderError'] & {}>[1];

/** The page of an error the library does not send back to a client: what went wrong, and what to do. */
export const renderErrorPage = async (ctx: KoaContextWithOIDC, out: ErrorOut): Promise<void> => {
  ctx.type = 'html';
  const said = escapeHtml(String(out.error_description ?? out.error ?? 'The request could not be completed'));
  ctx.body = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Cannot connect · Gatehouse</title><main><h1>This app cannot connect</h1><p>${said}</p><p>Go back to the app and start again; if it keeps failing, tell whoever looks after it.</p></main></html>`;
};

interface LibraryError {
  expose?: boolean;
  error?: string;
  error_description?: string;
  statusCode?: number;
}

/**
 * Shows the authorization endpoint's errors for clients that registered themselves on the error page, whatever the
 * library answered (a redirect, or a form that posts itself to the redirect URI). Call before the first request.
 */
export function keepRegisteredClientsErrorsOnPage(provider: Provider): void {
  const failed = new WeakMap<object, LibraryError>();
  provider.on('authorization.error', (ctx: KoaContextWithOIDC, error: Error) => failed.set(ctx, error as LibraryError));
  provider.on('server_error', (ctx: KoaContextWithOIDC, error: Error) => failed.set(ctx, error as LibraryError));
  provider.use(async (ctx, next) => {
    await next();
    const error = failed.get(ctx);
    const oidc = (ctx as KoaContextWithOIDC).oidc;
    if (!error || oidc?.route !== 'authorization') return;
    const client = oidc.client as { clientIdMetadataDocument?: boolean } | undefined;
    if (!client || client.clientIdMetadataDocument) return;
    ctx.remove('location');
    // (prompt=none's errors carry the redirect's 303 as their status.)
    ctx.status = !error.expose ? 500 : error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 400;
    const out = error.expose ? { error: error.error ?? 'invalid_request', error_description: error.error_description } : { error: 'server_error' };
    await renderErrorPage(ctx as KoaContextWithOIDC, out);
  });
}
