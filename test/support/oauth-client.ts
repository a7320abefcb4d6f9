import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What an MCP client that follows the specification's authorization keeps: the SDK's OAuthClientProvider, kept
// in memory, as a desktop or chat app keeps it on disk. Its redirect goes to a local callback (a loopback
// redirect, as a native app's), which catches the code the browser brings back.

export class MemoryOAuthClient implements OAuthClientProvider {
  private information: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = '';
  /** Where the SDK sent the person last: the authorization URL the browser opens. */
  authorizationUrl: URL | undefined;

  constructor(
    private readonly callbackUrl: string,
    readonly clientMetadataUrl: string | undefined,
    private readonly name: string,
  ) {}

  get redirectUrl() {
    return this.callbackUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }

  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A loopback redirect target: answers the browser, and hands over each code (or error) it was brought. */
export interface Callback {
  url: string;
  /** The next code the browser brings (rejects with the error the server sent instead). */
  next(): Promise<string>;
  close(): Promise<void>;
}

export async function startCallback(): Promise<Callback> {
  let waiting: { resolve(code: string): void; reject(error: Error): void } | undefined;
  const arrived: (string | Error)[] = [];
  const server = createHttpServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    // Only the redirect itself (a browser asks for /favicon.ico too).
    if (url.pathname !== '/callback') return void response.writeHead(404).end();
    const code = url.searchParams.get('code');
    const outcome = code ?? new Error(`${url.searchParams.get('error')}: ${url.searchParams.get('error_description')}`);
    response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Done</title><p>You may close this window.</p>');
    if (waiting) {
      if (typeof outcome === 'string') waiting.resolve(outcome);
      else waiting.reject(outcome);
      waiting = undefined;
    } else arrived.push(outcome);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () =>
      new Promise<string>((resolve, reject) => {
        const first = arrived.shift();
        if (first === undefined) waiting = { resolve, reject };
        else if (typeof first === 'string') resolve(first);
        else reject(first);
      }),
    close: () => closeServer(server),
  };
}

/** An https server on loopback with a certificate of its own authority (`ca`), made with openssl for the test. */
export interface LocalHttps {
  origin: string;
  /** The authority's certificate, PEM: what Gatehouse is told to trust (OUTBOUND_CA_FILE). */
  ca: string;
  /** Serves `body` as JSON at `path`; `fetched` counts the requests. */
  serve(path: string, body: unknown): void;
  /** Serves `text` as it is at `path`, said to be JSON (a document that is not). */
  serveText(path: string, text: string): void;
  fetched(path: string): number;
  close(): Promise<void>;
}

export async function startLocalHttps(): Promise<LocalHttps> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Gatehouse test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  const extensions = file('san.ext');
  execFileSync('sh', ['-c', `printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > '${extensions}'`]);
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', extensions);
  const ca = readFileSync(file('ca.pem'), 'utf8');
  const documents = new Map<string, string>();
  const counts = new Map<string, number>();
  const server = createHttpsServer({ key: readFileSync(file('server.key')), cert: readFileSync(file('server.pem')) }, (request, response) => {
    const path = new URL(request.url ?? '/', 'https://localhost').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const body = documents.get(path);
    if (body === undefined) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
  });
  rmSync(dir, { recursive: true, force: true });
  // Both loopback addresses (dual stack): `localhost` may resolve to either.
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    ca,
    serve: (path, body) => void documents.set(path, JSON.stringify(body)),
    serveText: (path, text) => void documents.set(path, text),
    fetched: (path) => counts.get(path) ?? 0,
    close: () => closeServer(server),
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
