import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Database } from '../../db/database';
import type { PersonActor } from '../../domain/identity/actors';
import { listPasskeys, registerPasskey, registrationOptions, relyingPartyOf, removePasskey, renamePasskey, type PasskeyOwner } from '../../domain/identity/passkeys';
import { passwordRules } from '../../domain/identity/passwords';
import { confirmPassword, resumeSession, type SessionRules } from '../../domain/identity/sessions';
import { secretsMatch } from '../../domain/identity/tokens';
import { AppError } from '../../domain/kit/errors';
import { clientAddress } from '../address-limits';
import { changesState, headerValue, type SessionCookie } from './cookies';
import { doorErrors } from './session-routes';
import { webAuthnRegistration } from './webauthn-input';

// A signed-in person's own passkeys: register, list, rename, remove. Like the password, a passkey is a way in,
// so these belong to the console's door rather than the catalog: they exist only where a browser runs WebAuthn.
// (The challenge a passkey signs to approve is an operation: reviews.passkey_challenge.) Adding or removing one
// takes the person's current password in the same request: a session's cookie alone (stolen, or a script's) must
// not give itself a key that signs approvals as the person.

export interface PasskeyRoutesOptions {
  db: Database;
  sessions: SessionRules;
  cookie: SessionCookie;
  publicUrl: string;
}

const nameField = z.string().trim().min(1).max(100);
const currentPassword = z.string().min(1).max(passwordRules.maxLength * 4).describe('Your current password, as you sign in with it');
const registerInput = z.strictObject({ name: nameField.optional(), password: currentPassword, response: webAuthnRegistration });
const removeInput = z.strictObject({ password: currentPassword });
const renameInput = z.strictObject({ name: nameField });
const idParams = z.strictObject({ id: z.string().min(1).max(100) });

export async function passkeyRoutes(app: FastifyInstance, options: PasskeyRoutesOptions): Promise<void> {
  const { db, sessions, cookie } = options;
  const relyingParty = relyingPartyOf(options.publicUrl);
  app.setErrorHandler(doorErrors);

  /** The signed-in person (and the session's CSRF token on every change), or 401/403. */
  async function signedIn(request: FastifyRequest): Promise<PasskeyOwner> {
    const resumed = await resumeSession(db, cookie.read(request), sessions);
    if (!resumed) throw new AppError('unauthorized', 'Sign in to the console first');
    if (changesState(request) && !secretsMatch(headerValue(request.headers['x-csrf-token']), resumed.session.csrfToken)) {
      throw new AppError('csrf_failed', 'This console call needs the X-CSRF-Token header');
    }
    const actor = resumed.caller.actor as PersonActor;
    return { userId: actor.userId, orgId: resumed.caller.organization.id };
  }

  app.get('/passkeys', async (request) => ({ success: true, data: await listPasskeys(db, await signedIn(request)) }));

  app.post('/passkeys/registration-options', async (request) => ({
    success: true,
    data: await registrationOptions(db, await signedIn(request), relyingParty),
  }));

  app.post('/passkeys', async (request, reply) => {
    const owner = await signedIn(request);
    const input = registerInput.parse(request.body ?? {});
    await confirmPassword(db, owner, input.password, sessions, clientAddress(request));
    const passkey = await registerPasskey(db, owner, relyingParty, { name: input.name, response: input.response as RegistrationResponseJSON });
    return reply.status(201).send({ success: true, data: passkey });
  });

  app.patch('/passkeys/:id', async (request) => {
    const owner = await signedIn(request);
    const { id } = idParams.parse(request.params);
    return { success: true, data: await renamePasskey(db, owner, id, renameInput.parse(request.body ?? {}).name) };
  });

  app.delete('/passkeys/:id', async (request) => {
    const owner = await signedIn(request);
    const { id } = idParams.parse(request.params);
    await confirmPassword(db, owner, removeInput.parse(request.body ?? {}).password, sessions, clientAddress(request));
    await removePasskey(db, owner, id);
    return { success: true, data: { removed: id } };
  });
}
