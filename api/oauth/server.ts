import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload, Configuration, errors as LibraryErrorClasses, KoaContextWithOIDC } from 'oidc-provider';
import type { Database } from '../../db/database';
import type { SecretBox } from '../../domain/kit/secret-box';
import { allAbilities } from '../../domain/identity/abilities';
import { grantRevoked, recordRefresh } from '../../domain/identity/oauth-connections';
import { oauthRecords, oauthSecret, UnstorableRecord, type OAuthRecords } from '../../domain/identity/oauth-records';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';
import type { StrangersDocumentRules } from '../../domain/notify/outbound';
import { keepRegisteredClientsErrorsOnPage, renderErrorPage } from './authorization-errors';
import { allowMetadataDocumentFetch, answerOneMetadataDocumentError, metadataDocumentFetch } from './client-metadata-documents';

// Gatehouse as an OAuth 2.1 authorization server (RFC 8414 metadata, authorization code with PKCE S256, refresh
// tokens that rotate, revocation, dynamic registration and Client ID Metadata Documents), as the MCP
// specification's authorization asks of a server that MCP clients connect to. The protocol is oidc-provider's, a
// certified implementation; what is ours: its records in PostgreSQL, which resources it issues tokens for (the
// REST API and the MCP server, RFC 8707), the consent (a person of the organization, in the console:
// api/oauth/interactions.ts), and what a connection is (an API key of the organization:
// domain/identity/oauth-connections.ts).

/** The resources a token may be for, by their identifiers (RFC 8707): the REST API and the MCP server. */
export interface ProtectedResources {
  rest: string;
  mcp: string;
}

export function protectedResources(publicUrl: string): ProtectedResources {
  return { rest: `${publicUrl}/api`, mcp: `${publicUrl}/mcp` };
}

/** Where the protocol's endpoints are, under the service's own URL (the issuer). */
export const oauthRoutes = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  end_session: '/oauth/session/end',
  introspection: '/oauth/introspect',
  userinfo: '/oauth/userinfo',
  pushed_authorization_request: '/oauth/par',
  backchannel_authentication: '/oauth/backchannel',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

/** How long things live, in seconds: an access token an hour, a code a minute, a refresh token two weeks (each use renews it). */
export const oauthLifetimes = { accessToken: 3600, authorizationCode: 60, refreshToken: 14 * 24 * 3600, interaction: 30 * 60, session: 30 * 60 } as const;

export interface AuthorizationServerOptions {
  db: Database;
  /** Seals and opens its cookie keys and signing keys, kept in the database. */
  secrets: SecretBox;
  /** The issuer: where people and clients reach the service. */
  publicUrl: string;
  /** Where a client's metadata document may be fetched from: public addresses (loopback in development and tests). */
  metadataDocuments: StrangersDocumentRules;
  /**
   * Tells the workflows of held writes that a connection's end withdrew to read their reviews now (the gate client's
   * reviewsChanged), rather than at their next re-read.
   */
  reviewsChanged(workflowIds: readonly string[]): Promise<void>;
  log: (error: unknown, message: string) => void;
}

type LibraryErrors = typeof LibraryErrorClasses;

/**
 * The authorization server's records of a kind, as oidc-provider's adapter. A code or refresh token is used once
 * even when two requests race with it: the loser is refused (invalid_grant) and the grant ended, as for any replay.
 */
class RecordsAdapter implements Adapter {
  private readonly records: OAuthRecords;
  constructor(
    db: Database,
    kind: string,
    private readonly errors: LibraryErrors,
    private readonly log: (error: unknown, message: string) => void,
    private readonly endGrant: (grantId: string, reason: 'token_replayed') => Promise<void>,
  ) {
    this.records = oauthRecords(db, kind);
  }
  async upsert(id: string, payload: AdapterPayload, expiresIn: number) {
    try {
      await this.records.upsert(id, payload as Record<string, unknown>, expiresIn || undefined);
    } catch (error) {
      if (error instanceof UnstorableRecord) throw new this.errors.InvalidRequest(error.message);
      throw error;
    }
  }
  find(id: string) {
    return this.records.find(id) as Promise<AdapterPayload | undefined>;
  }
  findByUid(uid: string) {
    return this.records.findByUid(uid) as Promise<AdapterPayload | undefined>;
  }
  findByUserCode(userCode: string) {
    return this.records.findByUserCode(userCode) as Promise<AdapterPayload | undefined>;
  }
  async consume(id: string) {
    const used = await this.records.consume(id);
    if (used.consumed) return;
    if (used.grantId) await this.endGrant(used.grantId, 'token_replayed').catch((error) => this.log(error, 'replayed grant not ended'));
    throw new this.errors.InvalidGrant('grant request is invalid: it was used already');
  }
  destroy(id: string) {
    return this.records.destroy(id);
  }
  revokeByGrantId(grantId: string) {
    return this.records.revokeByGrantId(grantId);
  }
}

/** The extra client property whose validator checks every client's metadata (it holds nothing itself). */
const clientChecks = 'gatehouse_checks';

/**
 * What Gatehouse takes of a client, besides what the library checks: a name a person can read (it becomes the
 * key's label), redirect URIs that are https, loopback http (a native app) or a private-use scheme (RFC 8252),
 * and no document the library would fetch for it (jwks_uri, sector_identifier_uri, request_uris).
 */
function checkClient(key: string, value: unknown, metadata: Record<string, unknown>, errors: LibraryErrors): void {
  const refuse = (message: string) => {
    throw new errors.InvalidClientMetadata(message);
  };
  if (key === clientChecks && value !== undefined) refuse(`${clientChecks} is not a client property`);
  const name = metadata.client_name;
  // No invisible formatting either (Cf: bidirectional overrides, zero-width characters): a name shown to people must
  // read as what it is, never as another agent's with something hidden in it.
  if (name !== undefined && (typeof name !== 'string' || name.trim().length === 0 || name.length > 100 || /[\p{Cc}\p{Cf}]/u.test(name))) {
    refuse('client_name must be 1 to 100 characters, without control or invisible formatting characters');
  }
  for (const field of ['jwks_uri', 'sector_identifier_uri', 'request_uris']) if (metadata[field] !== undefined) refuse(`${field} is not supported`);
  const uris = Array.isArray(metadata.redirect_uris) ? (metadata.redirect_uris as unknown[]) : [];
  for (const uri of uris) {
    let url: URL;
    try {
      url = new URL(String(uri));
    } catch {
      return refuse('redirect_uris must be URLs');
    }
    const scheme = url.protocol.slice(0, -1);
    const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
    const ok = scheme === 'https' || (scheme === 'http' && loopback) || (scheme.includes('.') && !['javascript', 'data', 'file', 'vbscript'].includes(scheme));
    if (!ok) refuse(`redirect_uris must be https, http on loopback, or a private-use scheme (com.example.app:/…); not ${url.protocol}//${url.host}`);
  }
}

export async function createAuthorizationServer(options: AuthorizationServerOptions): Promise<Provider> {
  // Loaded when first used (an api that no client signs in to never loads it, nor prints its runtime notice).
  const { default: Provider, errors } = await import('oidc-provider');
  const { db, publicUrl, metadataDocuments } = options;
  const resources = protectedResources(publicUrl);
  // A connection the client ended (its own revocation, a code or refresh token presented twice): its key revoked, its
  // held writes withdrawn in that transaction, and then their workflows told, since this api holds a Temporal client.
  const endGrant = async (grantId: string, reason: 'revoked_by_client' | 'token_replayed') => {
    const withdrawn = await grantRevoked(db, withdrawReviewsOfKey, grantId, reason);
    if (withdrawn.length) await options.reviewsChanged(withdrawn.map((review) => review.workflowId));
  };
  const cookieKeys = await oauthSecret(db, options.secrets, 'cookie_keys', () => [randomBytes(32).toString('base64url')]);
  const jwks = await oauthSecret(db, options.secrets, 'jwks', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' }] };
  });

  const configuration: Configuration = {
    adapter: (name: string) => new RecordsAdapter(db, name, errors, options.log, endGrant),
    // Clients identify themselves (a metadata document, or registration): none is configured here. They are public
    // clients (no secret: PKCE proves the code's requester) that may refresh.
    clients: [],
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    responseTypes: ['code'],
    pkce: { required: () => true },
    cookies: { keys: cookieKeys },
    jwks: jwks as Configuration['jwks'],
    // The account is the person who consented; what a token may do is the connection's (its key).
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    // The abilities are the scopes of both resources; listed here too, because a client's registered `scope` is
    // checked against this list (api/oauth/interactions.ts grants them both ways, for the resource and here). No
    // `openid`: no ID token is ever issued; `offline_access` is taken (clients ask for it) and changes nothing.
    scopes: ['offline_access', ...allAbilities],
    routes: oauthRoutes,
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    // Every authorization asks the person again: the grant is the one this authorization's consent made, never an
    // earlier one the browser's session remembers for the client.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      revocation: { enabled: true },
      // Open, as MCP clients expect; no registration access token (nothing to manage a registration with later).
      registration: { enabled: true, issueRegistrationAccessToken: false },
      // Sender-constrained tokens are not checked by the resources (they take Bearer tokens), so none is issued.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource asks for the MCP server (what MCP clients connect to).
        defaultResource: async () => resources.mcp,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resourceIndicator) => {
          if (resourceIndicator !== resources.mcp && resourceIndicator !== resources.rest) {
            throw new errors.InvalidTarget(`tokens are issued for ${resources.mcp} and ${resources.rest} only`);
          }
          return { scope: allAbilities.join(' '), audience: resourceIndicator, accessTokenTTL: oauthLifetimes.accessToken, accessTokenFormat: 'opaque' };
        },
      },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        // Fetched by rules of their own: https, public addresses only (api/oauth/client-metadata-documents.ts).
        allowFetch: allowMetadataDocumentFetch(metadataDocuments),
        cacheDuration: { min: 30, max: 3600 },
      },
    } as Configuration['features'],
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // A connection lives as long as the person let it (its grant), not as long as the browser's sign-in here.
    expiresWithSession: async () => false,
    // Revoking any of its tokens (RFC 7009) ends the whole connection, as a replayed code or refresh token does.
    revokeGrantPolicy: () => true,
    // Checked for every client, registered or described by a metadata document (the library calls this for its
    // one extra property, with the whole metadata).
    extraClientMetadata: { properties: [clientChecks], validator: (_ctx, key, value, metadata) => checkClient(key, value, metadata, errors) },
    ttl: {
      AccessToken: oauthLifetimes.accessToken,
      AuthorizationCode: oauthLifetimes.authorizationCode,
      RefreshToken: oauthLifetimes.refreshToken,
      Interaction: oauthLifetimes.interaction,
      Session: oauthLifetimes.session,
      // A grant lives as long as the person let the connection last (set when it is saved, api/oauth/interactions.ts).
      Grant: 365 * 24 * 3600,
    },
    // The library's own requests (a client's metadata document) go through ours.
    fetch: metadataDocumentFetch(metadataDocuments),
    renderError: renderErrorPage,
  };

  const provider = new Provider(publicUrl, configuration);
  answerOneMetadataDocumentError(provider, errors);
  keepRegisteredClientsErrorsOnPage(provider);
  // Its X-Forwarded-Host and X-Forwarded-Proto are believed because the hand-over writes them, from PUBLIC_URL, over
  // whatever a client sent (api/oauth/at-public-url.ts): the library sees https when PUBLIC_URL is.
  provider.proxy = true;
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    if (ctx.oidc.params?.grant_type !== 'refresh_token') return;
    const grantId = ctx.oidc.entities.RefreshToken?.grantId;
    if (grantId) recordRefresh(db, grantId).catch((error) => options.log(error, 'token refresh not recorded'));
  });
  provider.on('grant.revoked', (ctx: KoaContextWithOIDC, grantId: string) => {
    // The client revoked a token, or presented a code or refresh token used already: the connection ends. (A
    // grant revoked on any other route is not one of ours to end: none is, with tokens outliving sessions.)
    const reason = ctx.oidc?.route === 'revocation' ? 'revoked_by_client' : ctx.oidc?.route === 'token' ? 'token_replayed' : undefined;
    if (!reason) return options.log(new Error(`grant revoked on ${ctx.oidc?.route ?? ctx.path}`), 'grant revoked elsewhere');
    endGrant(grantId, reason).catch((error) => options.log(error, 'grant revocation not recorded'));
  });
  provider.on('server_error', (_ctx: unknown, error: unknown) => options.log(error, 'authorization server failed'));
  return provider;
}
