import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { Database } from '../../db/database';
import type { SecretBox } from '../../domain/kit/secret-box';
import { allAbilities } from '../../domain/identity/abilities';
import type { SessionRules } from '../../domain/identity/sessions';
import type { AddressLimitOptions } from '../address-limits';
import type { StrangersDocumentRules } from '../../domain/notify/outbound';
import { handOverAtPublicUrl } from './at-public-url';
import { interactionRoutes } from './interactions';
import { createAuthorizationServer, oauthRoutes, protectedResources } from './server';

// OAuth for MCP clients and the REST API, as the MCP specification's authorization (2025-11-25) has it:
//
//   /.well-known/oauth-protected-resource/mcp   the MCP server's Protected Resource Metadata (RFC 9728)
//   /.well-known/oauth-protected-resource/api   the REST API's
//   /.well-known/oauth-authorization-server     the authorization server's metadata (RFC 8414); the same document
//   /.well-known/openid-configuration           at OpenID Connect's address
//   /oauth/…                                    the protocol's endpoints (authorize, token, register, revoke, jwks)
//   /oauth/interaction/{uid}                    the consent page (the console's), and its calls

export interface OAuthOptions {
  db: Database;
  /** Seals and opens the server's own keys, kept in the database. */
  secrets: SecretBox;
  publicUrl: string;
  /** Where clients' metadata documents may be fetched from. */
  metadataDocuments: StrangersDocumentRules;
  sessions: SessionRules;
  /** Answers the console's page (the consent page is one of its pages). */
  sendPage(reply: FastifyReply): FastifyReply;
  /** The per-address limits, counted in PostgreSQL (api/address-limits.ts). */
  addressLimits: AddressLimitOptions;
  /** Tells held writes' workflows to read their reviews now: those a connection's end withdrew. */
  reviewsChanged(workflowIds: readonly string[]): Promise<void>;
}

/** What one address may ask of the authorization server's open endpoints, a minute, every api together. */
export const oauthRequestLimits = { registrationsPerMinute: 30, authorizationsPerMinute: 120 } as const;

/** Where a resource's Protected Resource Metadata is: named in its Bearer challenges. */
export function resourceMetadataUrl(publicUrl: string, resource: 'mcp' | 'api'): string {
  return `${publicUrl}/.well-known/oauth-protected-resource/${resource}`;
}

export async function oauthApi(app: FastifyInstance, options: OAuthOptions): Promise<void> {
  const { publicUrl } = options;
  const resources = protectedResources(publicUrl);
  // Made at its first request, not at start: its secrets are read from (or first written to) the database, and an
  // api starts, and answers 503, while the database is out of reach. A failed attempt is tried again next time.
  let made: Promise<Provider> | undefined;
  const provider = () => {
    made ??= createAuthorizationServer({
      db: options.db,
      secrets: options.secrets,
      publicUrl,
      metadataDocuments: options.metadataDocuments,
      reviewsChanged: options.reviewsChanged,
      log: (error, message) => app.log.error({ err: error }, message),
    }).catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };

  const metadataOf = (resource: string, name: string) => ({
    resource,
    authorization_servers: [publicUrl],
    scopes_supported: allAbilities,
    bearer_methods_supported: ['header'],
    resource_name: name,
    resource_documentation: `${publicUrl}/api/docs`,
  });
  const mcpMetadata = metadataOf(resources.mcp, 'Gatehouse MCP server');
  const restMetadata = metadataOf(resources.rest, 'Gatehouse REST API');
  const cors = (reply: FastifyReply) => reply.header('access-control-allow-origin', '*').header('cache-control', 'public, max-age=300');
  app.get('/.well-known/oauth-protected-resource/mcp', async (_request, reply) => cors(reply).send(mcpMetadata));
  app.get('/.well-known/oauth-protected-resource/api', async (_request, reply) => cors(reply).send(restMetadata));

  // The protocol's endpoints are the library's (a Koa app): each request is handed to it whole, its body unread,
  // with the security headers every answer of the service carries, as one that came at PUBLIC_URL (its metadata,
  // redirects and cookies are built from the request's host and protocol, which a client writes).
  const publicOrigin = new URL(publicUrl);
  let callback: ReturnType<Provider['callback']> | undefined;
  const handOver = async (request: FastifyRequest, reply: FastifyReply, url?: string) => {
    callback ??= (await provider()).callback();
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string);
    handOverAtPublicUrl(request.raw, publicOrigin, request.ip, url);
    void callback(request.raw, reply.raw);
  };
  await app.register(async (protocol) => {
    protocol.removeAllContentTypeParsers();
    protocol.addContentTypeParser('*', (_request, _payload, done) => done(null));
    // Anyone may register a client or start an authorization: each address may do so this often, every api together.
    await protocol.register(rateLimit, options.addressLimits);
    protocol.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
      if (error.statusCode !== 429) throw error;
      return reply.status(429).send({ error: 'too_many_requests', error_description: `Too many requests from this address: ${error.message}` });
    });
    const methods = ['GET', 'POST', 'OPTIONS', 'PUT', 'DELETE'] as const;
    const limited = (max: number) => ({ rateLimit: { max, timeWindow: '1 minute' } });
    protocol.route({ method: 'POST', url: oauthRoutes.registration, config: limited(oauthRequestLimits.registrationsPerMinute), handler: (request, reply) => handOver(request, reply) });
    protocol.route({ method: ['GET', 'POST'], url: oauthRoutes.authorization, config: limited(oauthRequestLimits.authorizationsPerMinute), handler: (request, reply) => handOver(request, reply) });
    protocol.route({ method: [...methods], url: '/oauth/*', handler: (request, reply) => handOver(request, reply) });
    protocol.route({ method: ['GET', 'OPTIONS'], url: '/.well-known/openid-configuration', handler: (request, reply) => handOver(request, reply) });
    // RFC 8414's address of the same metadata (the issuer has no path).
    protocol.route({
      method: ['GET', 'OPTIONS'],
      url: '/.well-known/oauth-authorization-server',
      handler: (request, reply) => handOver(request, reply, '/.well-known/openid-configuration'),
    });
  });

  await app.register(interactionRoutes, { db: options.db, publicUrl, provider, sessions: options.sessions, sendPage: options.sendPage, resources });
}
