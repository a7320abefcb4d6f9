import ipaddr from 'ipaddr.js';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { AppError } from '../kit/errors';

/**
 * Where the service may send requests of its own (webhooks, Slack messages): public addresses only, unless the
 * operator allows more. A URL is checked when it is saved, and every address it resolves to is checked again when
 * a request is made, on the connection itself (a name that later resolves to 10.0.0.1 is refused then).
 */
export interface OutboundRules {
  /** Loopback (127.0.0.0/8, ::1), over http too: for development and tests (`gatehouse dev` allows it). */
  allowLoopback: boolean;
  /** Private, link-local, shared and other non-public ranges (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivate: boolean;
  /** Certificate authorities trusted besides the system's (PEM), for receivers behind an internal CA (OUTBOUND_CA_FILE). */
  extraCertificateAuthorities?: string[];
}

/** The `ca` of an https request under the rules: the system's authorities and the extra ones, or Node's default. */
function trustedAuthorities(policy: OutboundRules): string[] | undefined {
  return policy.extraCertificateAuthorities?.length ? [...rootCertificates, ...policy.extraCertificateAuthorities] : undefined;
}

export const publicOnly: OutboundRules = { allowLoopback: false, allowPrivate: false };

/**
 * Where the service fetches a document at an address a stranger gave (an OAuth client's metadata document, at the
 * URL that is its client_id): public addresses only, whatever the webhooks' rules open to an organization's owners
 * (WEBHOOK_ALLOW_PRIVATE_ADDRESSES never widens it); loopback only under `gatehouse dev` and in tests. The extra
 * certificate authorities (OUTBOUND_CA_FILE) are trusted here too: they say whom to believe, not where to go.
 */
export interface StrangersDocumentRules {
  allowLoopback: boolean;
  extraCertificateAuthorities?: string[];
}

export const publicDocumentsOnly: StrangersDocumentRules = { allowLoopback: false };

/** The outbound rules a fetch on a stranger's word goes by: never a private range. */
export function strangersOutbound(rules: StrangersDocumentRules): OutboundRules {
  return { allowLoopback: rules.allowLoopback, allowPrivate: false, extraCertificateAuthorities: rules.extraCertificateAuthorities };
}

/** Why an address may not be reached under the policy, or undefined when it may. */
export function addressRefusal(address: string, policy: OutboundRules): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  // IPv4-compatible IPv6 (::a.b.c.d, deprecated) reaches IPv4 on some systems: never, whatever follows.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0) && range !== 'loopback') {
    return `${address} is an IPv4-compatible address, not a public one`;
  }
  // Link-local holds cloud metadata services (169.254.169.254): never, even where private ranges are allowed.
  if (range === 'linkLocal') return `${address} is a linkLocal address, not a public one`;
  if (range === 'unicast') return undefined;
  if (range === 'loopback') return policy.allowLoopback ? undefined : `${address} is a loopback address`;
  if (policy.allowPrivate && !['unspecified', 'multicast', 'broadcast'].includes(range)) return undefined;
  return `${address} is a ${range} address, not a public one`;
}

const isLoopbackHost = (hostname: string) => {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
};

/**
 * Whether the host is one the rules open beyond the public internet: localhost or a loopback address where loopback
 * is allowed, a private (non-public, non-link-local) address where private ranges are. A name other than localhost
 * is not: what it resolves to is checked on the connection.
 */
export function isAllowedNonPublicHost(hostname: string, policy: OutboundRules): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isLoopbackHost(bare)) return policy.allowLoopback;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() !== 'unicast' && addressRefusal(bare, policy) === undefined;
}

/**
 * The URL as it will be used, or a validation error naming `field`: https (http only to loopback, where loopback is
 * allowed), no credentials, and a host whose every address the policy allows.
 */
export async function checkOutboundUrl(raw: string, policy: OutboundRules, field = 'url'): Promise<string> {
  const refuse = (message: string) => new AppError('validation_failed', `${field} ${message}`, { fields: [{ field, message }] });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an https URL');
  if (url.username || url.password) throw refuse('must not carry a user name or password');
  if (url.protocol === 'http:' && !(policy.allowLoopback && isLoopbackHost(url.hostname))) {
    throw refuse('must be an https URL (http is allowed only to loopback, in development)');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((found) => found.address);
    } catch {
      throw refuse(`names a host that does not resolve (${host})`);
    }
  }
  for (const address of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw refuse(`resolves to ${refusal}; requests go to public addresses only`);
  }
  return url.toString();
}

/** A DNS lookup for the connection that refuses every address the policy does not allow. */
function guardedLookup(policy: OutboundRules): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses = found as LookupAddress[];
      const refused = addresses.map((entry) => addressRefusal(entry.address, policy)).find(Boolean);
      if (refused) return callback(Object.assign(new Error(`refused: ${refused}`), { code: 'EADDRNOTALLOWED' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export interface OutboundAnswer {
  status: number;
  /** The start of the answer's body, for a delivery log. */
  body: string;
}

/**
 * POSTs the body and answers the response's status (redirects are not followed: a 3xx is an answer like any
 * other). Fails with the network's error, when the address is not allowed, or when the whole exchange (connecting,
 * sending, the answer's status and the first 2 KiB of its body) takes longer than `timeoutMs`; the rest of a longer
 * body is not read.
 */
export function postOutbound(
  url: string,
  body: string,
  headers: Record<string, string>,
  { policy, timeoutMs = 10_000, signal }: { policy: OutboundRules; timeoutMs?: number; signal?: AbortSignal },
): Promise<OutboundAnswer> {
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) return Promise.reject(new Error(`refused: ${refusal}`));
  }
  const send = target.protocol === 'https:' ? https.request : http.request;
  const deadline = AbortSignal.timeout(timeoutMs);
  return new Promise((resolve, reject) => {
    const request = send(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), ...headers },
        lookup: guardedLookup(policy),
        signal: signal ? AbortSignal.any([deadline, signal]) : deadline,
        agent: false,
        ca: trustedAuthorities(policy),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 500) });
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          kept += chunk.length;
          if (kept >= answerBytesRead) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', reject);
      },
    );
    request.on('error', (error) => reject(deadline.aborted ? new Error(`no answer within ${timeoutMs / 1000} s`) : error));
    request.end(body);
  });
}

export interface FetchedDocument {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * GETs a document under the rules (an OAuth client's metadata document): https only, every address checked on the
 * connection, redirects not followed, refused when its body passes `maxBytes` or the whole exchange takes longer
 * than `timeoutMs`.
 */
export function getOutbound(
  url: string,
  { policy, timeoutMs = 5_000, maxBytes, headers = {}, signal }: { policy: OutboundRules; timeoutMs?: number; maxBytes: number; headers?: Record<string, string>; signal?: AbortSignal },
): Promise<FetchedDocument> {
  const target = new URL(url);
  if (target.protocol !== 'https:') return Promise.reject(new Error(`refused: ${url} is not an https URL`));
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) return Promise.reject(new Error(`refused: ${refusal}`));
  }
  const deadline = AbortSignal.timeout(timeoutMs);
  return new Promise((resolve, reject) => {
    const request = https.get(
      target,
      { headers, lookup: guardedLookup(policy), signal: signal ? AbortSignal.any([deadline, signal]) : deadline, agent: false, ca: trustedAuthorities(policy) },
      (response) => {
        const declared = Number(response.headers['content-length']);
        if (declared > maxBytes) {
          response.destroy();
          return reject(new Error(`refused: the document is ${declared} bytes, more than ${maxBytes}`));
        }
        const chunks: Buffer[] = [];
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > maxBytes) {
            response.destroy();
            return reject(new Error(`refused: the document is more than ${maxBytes} bytes`));
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
          resolve({ status: response.statusCode ?? 0, headers: flat, body: Buffer.concat(chunks) });
        });
        response.on('error', reject);
      },
    );
    request.on('error', (error) => reject(deadline.aborted ? new Error(`no answer within ${timeoutMs / 1000} s`) : error));
  });
}

/** How much of an answer's body is read (for the delivery log): the rest is left unread. */
const answerBytesRead = 2048;

/** What the audit trail keeps of an endpoint's URL: its host (a URL's path and query may hold a receiver's token). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
