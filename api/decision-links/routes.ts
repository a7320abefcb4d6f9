import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { reviewWebUrl } from '../../domain/gate/links';
import { confirmDecisionLink, decisionLinkToSign, readDecisionLink, type SignedInPerson } from '../../domain/notify/decision-links';
import type { VerdictPorts } from '../../domain/gate/reviews/verdicts';
import type { PersonActor } from '../../domain/identity/actors';
import { resumeSession, type SessionRules } from '../../domain/identity/sessions';
import { secretsMatch } from '../../domain/identity/tokens';
import { text } from '../../domain/kit/fields';
import { AppError } from '../../domain/kit/errors';
import { findGatedWrite } from '../../domain/resources';
import type { AddressLimitOptions } from '../address-limits';
import type { GateClient } from '../catalog/gate-client';
import { approvalChallengeOf } from '../catalog/review-passkeys';
import { errorBody, httpError } from '../rest/http';
import { crossSiteRefusal, headerValue, sessionCookie } from '../console/cookies';

// The decision links' calls, for the public page /decide#{token} (features/decide): read the link (never decides:
// mail scanners open links), and confirm it (the person's verdict). Each is a POST that carries the token in its
// JSON body, never in the path or the query, which proxies log and traces record. The token alone says which
// organization, review and person; the one thing besides it a call may bring is the console session of that person,
// which an Approve link needs where the organization asks for its person signed in. Each address may call them this
// often a minute, every api together.

export interface DecisionLinkRoutesOptions {
  db: Database;
  gate: GateClient;
  publicUrl: string;
  /** Console sessions, for an Approve link that needs its person signed in. */
  sessions: SessionRules;
  /** Checks a passkey's assertion over a verdict (domain/identity); absent, a confirm that sends one is refused. */
  verifyPasskey?: VerdictPorts['verifyPasskey'];
  /** The per-address limits, counted in PostgreSQL (api/address-limits.ts). */
  addressLimits: AddressLimitOptions;
}

export const decisionLinkLimits = { readsPerMinute: 60, confirmsPerMinute: 20 } as const;

/** How long a confirm waits for the held write's workflow to finish, so that the page can say it was applied. */
const outcomeWaitMs = 20_000;

const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*$/, 'base64url');

/** The link's secret, as the page read it from the link's fragment (43 characters; a longer one is no link). */
const linkToken = z.string().max(100);
const tokenInput = z.strictObject({ token: linkToken });

const confirmInput = z.strictObject({
  token: linkToken,
  comment: text({ max: 2000 }).optional(),
  passkey: z
    .strictObject({
      credential_id: base64url(1024),
      authenticator_data: base64url(4096),
      client_data_json: base64url(8192),
      signature: base64url(1024),
      signed_at: z.string().max(40),
    })
    .optional(),
});

/** JSON only, body or not: a form of another site (which cannot send this type without CORS) never reaches a link. */
function assertJson(request: FastifyRequest): void {
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
    throw new AppError('unsupported_media_type', 'Send the link\'s token in a JSON body ({"token": "…"}) with Content-Type: application/json');
  }
}

export async function decisionLinkRoutes(app: FastifyInstance, options: DecisionLinkRoutesOptions): Promise<void> {
  const { db, gate, publicUrl } = options;
  const cookie = sessionCookie(publicUrl);

  /**
   * The person the request's console session is of, if any. A session that is to count for a verdict (`forVerdict`)
   * must come with its CSRF token, as every console call that changes something does, and is activity that keeps it
   * alive; a read only looks.
   */
  async function signedInPerson(request: FastifyRequest, forVerdict: boolean): Promise<SignedInPerson | undefined> {
    const resumed = await resumeSession(db, cookie.read(request), options.sessions, { touch: forVerdict });
    if (!resumed) return undefined;
    if (forVerdict && !secretsMatch(headerValue(request.headers['x-csrf-token']), resumed.session.csrfToken)) {
      throw new AppError('csrf_failed', "This request did not come from the console: the session's X-CSRF-Token header is missing or wrong");
    }
    const actor = resumed.caller.actor as PersonActor;
    return { userId: actor.userId, email: actor.email };
  }

  await app.register(rateLimit, options.addressLimits);
  app.setErrorHandler((error: { statusCode?: number }, request, reply) => {
    const refusal =
      error.statusCode === 429 && !(error instanceof AppError)
        ? new AppError('rate_limited', 'Too many requests from this address for decision links; wait a minute and try again')
        : httpError(error);
    if (refusal.status >= 500) request.log.error({ err: error }, 'decision link request failed');
    return reply.status(refusal.status).send(errorBody(refusal));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody(new AppError('not_found', `No route ${request.method} ${request.url.split('?')[0]}`))),
  );
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const refusal = crossSiteRefusal(request, publicUrl);
    if (refusal) return reply.status(refusal.status).send(errorBody(refusal));
  });

  // A POST, though it changes nothing: the token travels in the body.
  app.post('/read', { config: { rateLimit: { max: decisionLinkLimits.readsPerMinute, timeWindow: '1 minute' } } }, async (request) => {
    assertJson(request);
    const { token } = tokenInput.parse(request.body ?? {});
    return { success: true, data: await readDecisionLink(db, token, await signedInPerson(request, false)) };
  });

  // For an organization that needs approvals signed: the challenge the link's person's passkey signs (the review,
  // the payload digest the link was sent for, its verdict, now). Decides nothing. It names none of their passkeys
  // (whoever holds the link is not yet known to be them): the browser offers the person's own, and the confirm
  // takes only a passkey of the person the link was sent to.
  app.post('/passkey-challenge', { config: { rateLimit: { max: decisionLinkLimits.readsPerMinute, timeWindow: '1 minute' } } }, async (request) => {
    assertJson(request);
    const { token } = tokenInput.parse(request.body ?? {});
    const link = await decisionLinkToSign(db, token);
    return { success: true, data: approvalChallengeOf(publicUrl, { id: link.reviewId, digest: link.payloadDigest, verdict: link.verdict }) };
  });

  app.post('/confirm', { config: { rateLimit: { max: decisionLinkLimits.confirmsPerMinute, timeWindow: '1 minute' } } }, async (request) => {
    assertJson(request);
    const { token, ...given } = confirmInput.parse(request.body ?? {});
    const confirmation = { ...given, signedIn: () => signedInPerson(request, true) };
    const review = await confirmDecisionLink(db, token, confirmation, {
      writeOf: findGatedWrite,
      reviewEnded: (workflowId, verdict) => gate.reviewDecided(workflowId, verdict, outcomeWaitMs),
      finishUrl: (reviewId) => reviewWebUrl(publicUrl, reviewId),
      verifyPasskey: options.verifyPasskey,
    });
    return {
      success: true,
      data: {
        review_id: review.id,
        status: review.status,
        approvals: { required: review.approvals.required, given: review.approvals.given.length },
        applied: review.applied_at !== null,
        failure: review.failure,
      },
    };
  });
}
