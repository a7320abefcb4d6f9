import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { families, isAbility, isWriteAbility, type Family } from '../../domain/identity/abilities';
import type { PersonActor } from '../../domain/identity/actors';
import {
  connectClient,
  connectionDays,
  connectors,
  consentProblems,
  mayConnect,
  plannedConnectionLabel,
  type ConnectingClient,
} from '../../domain/identity/oauth-connections';
import { endConnection } from '../../domain/identity/api-keys';
import { resumeSession, type SessionRules } from '../../domain/identity/sessions';
import { secretsMatch } from '../../domain/identity/tokens';
import { AppError, asRefusal, invalidFields } from '../../domain/kit/errors';
import { changesState, crossSiteRefusal, headerValue, sessionCookie } from '../console/cookies';
import { errorBody, httpError } from '../rest/http';
import type { ProtectedResources } from './server';
import { withdrawReviewsOfKey } from '../../domain/gate/reviews/withdraw';

// The consent: a client sent a person's browser to the authorization endpoint, and the library sent it on to
// /oauth/interaction/{uid}, the console's consent page. There the person signs in to the console (its own sign-in:
// the session is the console's) and says which abilities the client gets, for how long, or refuses it. Only
// people who may manage the organization's keys (owners, admins) may connect a client; anyone else is told who
// can. The page's calls below take the console's session and its CSRF token, like every console call, and the
// library's interaction cookie, which only this browser holds.

export interface InteractionRoutesOptions {
  db: Database;
  publicUrl: string;
  /** The authorization server, made at its first use. */
  provider(): Promise<Provider>;
  sessions: SessionRules;
  resources: ProtectedResources;
  sendPage(reply: FastifyReply): FastifyReply;
}

const consentInput = z.strictObject({
  access: z.enum(['read', 'read_write']),
  abilities: z.array(z.string().max(60)).max(100),
  lasts_days: z.number().int(),
});

const expired = () =>
  new AppError('not_found', 'This connection request has expired or was already answered; start again from the app that sent you here');

export async function interactionRoutes(app: FastifyInstance, options: InteractionRoutesOptions): Promise<void> {
  const { db, sessions, resources } = options;
  const cookie = sessionCookie(options.publicUrl);

  app.setErrorHandler((error, request, reply) => {
    const refusal = asRefusal(error) ?? httpError(error);
    if (refusal.status >= 500) request.log.error({ err: error }, 'consent request failed');
    return reply.status(refusal.status).send(errorBody(refusal));
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const refusal = crossSiteRefusal(request, options.publicUrl);
    if (refusal) return reply.status(refusal.status).send(errorBody(refusal));
  });

  /** The interaction this browser holds (its cookie), for this uid; expired or answered, a 404. */
  async function interactionOf(request: FastifyRequest, reply: FastifyReply) {
    const { uid } = request.params as { uid: string };
    const provider = await options.provider();
    let details;
    try {
      details = await provider.interactionDetails(request.raw, reply.raw);
    } catch {
      throw expired();
    }
    if (details.uid !== uid) throw expired();
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) throw expired();
    const resource = details.params.resource;
    if (Array.isArray(resource) && resource.length > 1) throw new AppError('validation_failed', 'Ask for one resource at a time: the MCP server or the REST API');
    const requested = String(details.params.scope ?? '')
      .split(' ')
      .filter(isAbility);
    const identifiedBy: ConnectingClient['identifiedBy'] = (client as unknown as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument ? 'metadata_document' : 'registration';
    const connecting: ConnectingClient = {
      id: client.clientId,
      name: (client.clientName as string | undefined)?.trim() || client.clientId,
      uri: (client.clientUri as string | undefined) ?? null,
      identifiedBy,
    };
    return {
      provider,
      details,
      client: connecting,
      resource: (Array.isArray(resource) ? resource[0] : resource) ?? resources.mcp,
      requested,
      redirectHost: hostOf(String(details.params.redirect_uri ?? '')),
      oidcScopes: String(details.params.scope ?? '')
        .split(' ')
        .filter((scope) => scope === 'openid' || scope === 'offline_access'),
    };
  }

  /** The signed-in person, or 401; with `csrf`, the request must carry the session's CSRF token. */
  async function personOf(request: FastifyRequest, { csrf }: { csrf: boolean }) {
    const resumed = await resumeSession(db, cookie.read(request), sessions);
    if (!resumed || resumed.caller.actor.kind !== 'person') throw new AppError('unauthorized', 'Sign in to the console first');
    if (csrf && changesState(request) && !secretsMatch(headerValue(request.headers['x-csrf-token']), resumed.session.csrfToken)) {
      throw new AppError('csrf_failed', 'This request did not come from the consent page: the X-CSRF-Token header is missing or wrong');
    }
    return { caller: resumed.caller, person: resumed.caller.actor as PersonActor, session: resumed.session };
  }

  app.get('/oauth/interaction/:uid', async (_request, reply) => options.sendPage(reply));

  app.get('/oauth/interaction/:uid/details', async (request, reply) => {
    const { person, caller, session } = await personOf(request, { csrf: false });
    const interaction = await interactionOf(request, reply);
    // The key it would be: the app's own name, numbered when another key has it.
    const listedAs = await plannedConnectionLabel(db, { orgId: caller.organization.id, personId: person.userId, client: interaction.client });
    return {
      success: true,
      data: {
        client: {
          id: interaction.client.id,
          name: interaction.client.name,
          listed_as: listedAs,
          uri: interaction.client.uri,
          identified_by: interaction.client.identifiedBy,
          redirect_host: interaction.redirectHost,
        },
        resource: interaction.resource,
        organization: { slug: caller.organization.slug, name: caller.organization.name },
        person: { email: person.email, name: session.personName, role: person.role },
        requested: { abilities: interaction.requested },
        abilities: interaction.requested.map((ability) => {
          const family = ability.split('.')[0] as Family;
          return { ability, family, description: families[family].description, write: isWriteAbility(ability) };
        }),
        may_consent: mayConnect(person.role),
        consenters: mayConnect(person.role) ? [] : await connectors(db, caller.organization.id),
        lasts_days: { options: connectionDays.options, default: connectionDays.default },
        csrf_token: session.csrfToken,
      },
    };
  });

  app.post('/oauth/interaction/:uid/consent', async (request, reply) => {
    const { person, caller } = await personOf(request, { csrf: true });
    if (!mayConnect(person.role)) {
      const who = (await connectors(db, caller.organization.id)).map((someone) => someone.email).join(', ');
      throw new AppError('insufficient_role', `Only owners and admins may connect apps to ${caller.organization.name}; you are ${person.role}. Ask ${who || 'an owner'}`);
    }
    const interaction = await interactionOf(request, reply);
    const input = consentInput.parse(request.body ?? {});
    const choice = { access: input.access, abilities: input.abilities, lastsDays: input.lasts_days };
    const problems = consentProblems(choice, interaction.requested);
    if (problems.length) throw invalidFields(problems);

    // The grant the library issues tokens from: the chosen abilities for the one resource, the rest refused (so
    // that the library does not ask again), living as long as the person let the connection last.
    // (The library's Grant takes `expiresIn` as every token does; its types leave it out.)
    const grantInit = { accountId: person.userId, clientId: interaction.client.id, expiresIn: input.lasts_days * 24 * 3600 };
    const { provider } = interaction;
    const grant = new provider.Grant(grantInit as ConstructorParameters<typeof provider.Grant>[0]);
    grant.addResourceScope(interaction.resource, choice.abilities.join(' '));
    const refused = interaction.requested.filter((ability) => !choice.abilities.includes(ability));
    if (refused.length) grant.rejectResourceScope(interaction.resource, refused.join(' '));
    grant.addOIDCScope([...interaction.oidcScopes, ...choice.abilities].join(' '));
    if (refused.length) grant.rejectOIDCScope(refused.join(' '));
    const grantId = await grant.save();
    let key;
    try {
      const consentUid = interaction.details.uid;
      key = await connectClient(db, { orgId: caller.organization.id, personId: person.userId, client: interaction.client, grantId, consentUid, choice, requested: interaction.requested });
    } catch (error) {
      await grant.destroy();
      throw error;
    }
    try {
      await forgetEarlierSignIn(provider, interaction.details);
      const redirectTo = await provider.interactionResult(
        request.raw,
        reply.raw,
        { login: { accountId: person.userId }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
      return { success: true, data: { redirect_to: redirectTo } };
    } catch (error) {
      // The authorization ended meanwhile (it expired): no connection is left that no client can use.
      await db.transaction((tx) =>
        endConnection(tx, withdrawReviewsOfKey, { id: key.id, orgId: key.orgId, grantId, clientId: interaction.client.id, label: key.label }, { type: 'user', id: person.userId }, 'consent_not_completed'),
      );
      throw error;
    }
  });

  app.post('/oauth/interaction/:uid/deny', async (request, reply) => {
    await personOf(request, { csrf: true });
    const { provider } = await interactionOf(request, reply);
    const redirectTo = await provider.interactionResult(
      request.raw,
      reply.raw,
      { error: 'access_denied', error_description: 'The person refused to connect this app' },
      { mergeWithLastSubmission: false },
    );
    return { success: true, data: { redirect_to: redirectTo } };
  });
}

/**
 * The library keeps a sign-in of its own in the browser (whoever consented last). Ours is the console's, asked at
 * every consent, so the library's is forgotten before this consent is recorded: else, were it someone else's, the
 * library would first log that person out (a page of its own that the security policy stops).
 */
async function forgetEarlierSignIn(provider: Provider, interaction: Awaited<ReturnType<Provider['interactionDetails']>>): Promise<void> {
  const uid = interaction.session?.uid;
  if (!uid) return;
  await (await provider.Session.findByUid(uid))?.destroy();
  delete interaction.session;
  await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
}

/** Where the browser goes back to: the redirect's host, or its scheme for a native app's private-use scheme. */
function hostOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.host || `${parsed.protocol}//`;
  } catch {
    return '';
  }
}
