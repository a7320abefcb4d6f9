import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { permissionsOf } from '../../domain/identity/actors';
import { readPasswordLink, setPasswordWithLink } from '../../domain/identity/password-links';
import { signInOptions, signInWithPasskey } from '../../domain/identity/passkey-sign-in';
import { relyingPartyOf } from '../../domain/identity/passkeys';
import { passwordRules } from '../../domain/identity/passwords';
import { endSession, resumeSession, signIn, type SessionRules } from '../../domain/identity/sessions';
import { secretsMatch } from '../../domain/identity/tokens';
import { AppError, asRefusal } from '../../domain/kit/errors';
import type { Caller, Role } from '../../domain/identity/actors';
import type { Session } from '../../domain/identity/sessions';
import { clientAddress, type AddressLimitOptions } from '../address-limits';
import { errorBody, httpError } from '../rest/http';
import { changesState, headerValue, type SessionCookie } from './cookies';
import { webAuthnResponse } from './webauthn-input';

// The console's door: signing in and out, and setting a password from a one-time link. These are how a person
// gets a session, not calls of operations; everything a signed-in person does goes through the call pipeline.

export interface TemporalUiLinks {
  url: string;
  namespace: string;
  roles: readonly Role[];
}

export interface SessionRoutesOptions {
  db: Database;
  sessions: SessionRules;
  cookie: SessionCookie;
  temporalUi?: TemporalUiLinks;
  /** The console's public URL: its host name is the passkeys' relying party. */
  publicUrl: string;
  /** The per-address limits, counted in PostgreSQL (api/address-limits.ts). */
  addressLimits: AddressLimitOptions;
}

const signInInput = z.strictObject({
  organization: z.string().trim().min(1).max(63).describe("The organization's slug"),
  email: z.string().trim().min(3).max(254),
  password: z.string().min(1).max(passwordRules.maxLength * 4),
});
const passkeySignInInput = z.strictObject({ response: webAuthnResponse });

/** Each address may start this many passkey sign-ins a minute, every api together (each keeps a challenge five minutes). */
export const passkeySignInLimits = { perMinute: 30 } as const;
/**
 * Each address may send this many password sign-ins a minute, every api together, heard or not: the rest are
 * refused before any password is hashed, so that one address's flood cannot take the hashing every sign-in shares
 * (two at a time per process, domain/identity/passwords.ts).
 */
export const passwordSignInLimits = { perMinute: 30 } as const;
const linkInput = z.strictObject({ token: z.string().min(1).max(200) });
const setPasswordInput = linkInput.extend({ password: z.string().max(passwordRules.maxLength * 4) });

function sessionAnswer(caller: Caller, session: Session, temporalUi: TemporalUiLinks | undefined) {
  const actor = caller.actor;
  if (actor.kind !== 'person') throw new Error('a session is always a person');
  const seesWorkflows = temporalUi !== undefined && temporalUi.roles.includes(actor.role);
  return {
    /** A review's workflow is at this prefix plus its workflow id; null for roles the setting leaves out. */
    workflow_url_prefix: seesWorkflows ? `${temporalUi.url}/namespaces/${encodeURIComponent(temporalUi.namespace)}/workflows/` : null,
    person: { id: actor.userId, email: actor.email, name: session.personName, role: actor.role },
    organization: {
      slug: caller.organization.slug,
      name: caller.organization.name,
      api_access: caller.organization.apiAccess,
      approvals_need_passkey: caller.organization.approvalsNeedPasskey,
    },
    permissions: permissionsOf(actor.role),
    csrf_token: session.csrfToken,
    expires_at: session.expiresAt,
  };
}

/** The door's refusals in the console's envelope (a throttled one says when to retry); only faults are logged. */
export function doorErrors(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const refusal = asRefusal(error) ?? httpError(error);
  if (refusal.status >= 500) request.log.error({ err: error }, 'console request failed');
  const retryAfter = refusal.details?.retry_after_seconds;
  if (refusal.status === 429 && typeof retryAfter === 'number') reply.header('retry-after', retryAfter);
  return reply.status(refusal.status).send(errorBody(refusal));
}

/** A per-address limit's 429 (its headers are the plugin's), by the route it guards. */
function addressLimitRefusal(request: FastifyRequest, context: { ttl: number }) {
  const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
  const what = request.routeOptions.url?.endsWith('/passkey-options') ? 'passkey sign-ins' : 'sign-in attempts';
  return new AppError('rate_limited', `Too many ${what} from this address; try again in ${seconds} s`, { retry_after_seconds: seconds });
}

export async function sessionRoutes(app: FastifyInstance, options: SessionRoutesOptions): Promise<void> {
  const { db, sessions, cookie } = options;
  const relyingParty = relyingPartyOf(options.publicUrl);

  app.setErrorHandler(doorErrors);

  app.get('/session', async (request, reply) => {
    const resumed = await resumeSession(db, cookie.read(request), sessions);
    // Asking whether anyone is signed in is no error: the page asks before it knows.
    if (!resumed) {
      if (cookie.read(request) !== undefined) cookie.clear(request, reply);
      return { success: true, data: null };
    }
    return { success: true, data: sessionAnswer(resumed.caller, resumed.session, options.temporalUi) };
  });

  await app.register(rateLimit, { ...options.addressLimits, errorResponseBuilder: addressLimitRefusal });

  app.post('/session', { config: { rateLimit: { max: passwordSignInLimits.perMinute, timeWindow: '1 minute' } } }, async (request, reply) => {
    const input = signInInput.parse(request.body ?? {});
    const signedIn = await signIn(
      db,
      { orgSlug: input.organization, email: input.email, password: input.password, address: clientAddress(request), userAgent: request.headers['user-agent'] },
      sessions,
    );
    cookie.set(request, reply, signedIn.token, sessions.lifetimeMs);
    reply.header('cache-control', 'no-store');
    return reply.status(201).send({ success: true, data: sessionAnswer(signedIn.caller, signedIn.session, options.temporalUi) });
  });

  // Signing in with a passkey: the options (a challenge; the authenticator offers the person's passkeys), then
  // the assertion, which starts the same session a password does.
  app.post('/session/passkey-options', { config: { rateLimit: { max: passkeySignInLimits.perMinute, timeWindow: '1 minute' } } }, async () => ({
    success: true,
    data: await signInOptions(db, relyingParty),
  }));

  app.post('/session/passkey', async (request, reply) => {
    const { response } = passkeySignInInput.parse(request.body ?? {});
    const signedIn = await signInWithPasskey(db, relyingParty, { response: response as AuthenticationResponseJSON, userAgent: request.headers['user-agent'] }, sessions);
    cookie.set(request, reply, signedIn.token, sessions.lifetimeMs);
    return reply.status(201).send({ success: true, data: sessionAnswer(signedIn.caller, signedIn.session, options.temporalUi) });
  });

  app.delete('/session', async (request, reply) => {
    const resumed = await resumeSession(db, cookie.read(request), sessions);
    // Sign-out needs the CSRF token too: another site must not sign a person out either.
    if (resumed && changesState(request) && !secretsMatch(headerValue(request.headers['x-csrf-token']), resumed.session.csrfToken)) {
      return reply.status(403).send(errorBody(new AppError('csrf_failed', 'Sign-out needs the X-CSRF-Token header')));
    }
    if (resumed) await endSession(db, resumed.session.id);
    cookie.clear(request, reply);
    return { success: true, data: { signed_out: true } };
  });

  app.post('/password-link', async (request) => {
    const { token } = linkInput.parse(request.body ?? {});
    return { success: true, data: await readPasswordLink(db, token) };
  });

  app.post('/password', async (request) => {
    const input = setPasswordInput.parse(request.body ?? {});
    return { success: true, data: await setPasswordWithLink(db, input.token, input.password) };
  });
}
