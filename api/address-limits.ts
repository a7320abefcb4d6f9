import { normalizeIP, type FastifyRateLimitStore, type FastifyRateLimitStoreCtor, type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import type { AddressCounters } from '../domain/usage/address-counters';

// The per-address limits of the routes anyone may call (signing in, decision links, OAuth's registration and
// authorization) are @fastify/rate-limit's (its headers, its 429s), counted in PostgreSQL rather than in each
// process's memory: every api behind the proxy shares one count per address.

/**
 * @fastify/rate-limit's store over the shared counters: a route's limit is its own counter (the namespace, the
 * route's method and path, then the client's address, IPv6 by its /64 as the plugin hands it over).
 */
class SharedStore implements FastifyRateLimitStore {
  constructor(
    private readonly counters: AddressCounters,
    private readonly prefix: string,
  ) {}

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    this.counters.hit(`${this.prefix}${key}`, timeWindow).then(
      (hit) => callback(null, { current: hit.count, ttl: hit.ttlMs }),
      (error: Error) => callback(error),
    );
  }

  /** The plugin hands over the route's merged limit settings, the route itself as `routeInfo` (its types say otherwise). */
  child(settings: object): FastifyRateLimitStore {
    const route = (settings as { routeInfo: { method: string | string[]; url: string } }).routeInfo;
    const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
    return new SharedStore(this.counters, `${this.prefix}${method} ${route.url} `);
  }
}

/** What a plugin registers @fastify/rate-limit with: limits only on the routes that name one, counted in PostgreSQL. */
export type AddressLimitOptions = Pick<RateLimitPluginOptions, 'global' | 'store'>;

export function addressLimitOptions(counters: AddressCounters, namespace = ''): AddressLimitOptions {
  const store: FastifyRateLimitStoreCtor = class extends SharedStore {
    constructor() {
      super(counters, namespace);
    }
  };
  return { global: false, store };
}

/**
 * The client's address as the limits count it: Fastify's (the socket's peer, or what trusted proxies say, as
 * TRUST_PROXY has it), an IPv6 address by its /64 (one host's share), as @fastify/rate-limit keys its counts.
 */
export function clientAddress(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}
