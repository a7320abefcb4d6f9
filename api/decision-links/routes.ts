import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Database } from '../../db/database';
import { reviewWebUrl } from '../../domain/gate/links';
import { confirmDecisionLink, decisionLinkToSign, readDecisionLink } from '../../domain/notify/decision-links';
import type { VerdictPorts } from '../../domain/gate/reviews/verdicts';
import { text } from '../../domain/kit/fields';
import { AppError } from '../../domain/kit/errors';
import { findGatedWrite } from '../../domain/resources';
import type { AddressLimitOptions } from '../address-limits';
import type { GateClient } from '../catalog/gate-client';
import { approvalChallengeOf } from '../catalog/review-passkeys';
import { errorBody, httpError } from '../rest/http';
import { crossSiteRefusal } from '../console/cookies';

// The decision links' calls, for the public page /decide/{token} (features/decide): read the link (never
// decides: mail scanners open links) and confirm it (the person's verdict). No session: the token alone says which
// organization, review and person, and nothing else the request carries is trusted for it. Each address may call
// them this often a minute, every api together.

export interface DecisionLinkRoutesOptions {
  db: Database;
  gate: GateClient;
  publicUrl: string;
  /** Checks a passkey's assertion over a verdict (domain/identity); absent, a confirm that sends one is refused. */
  verifyPasskey?: VerdictPorts['verifyPasskey'];
  /** The per-address limits, counted in PostgreSQL (api/address-limits.ts). */
  addressLimits: AddressLimitOptions;
}

export const decisionLinkLimits = { readsPerMinute: 60, confirmsPerMinute: 20 } as const;

/** How long a confirm waits for the held write's workflow to finish, so that the page can say it was applied. */
const outcomeWaitMs = 20_000;

const base64url = (max: number) => z.string().max(max).regex(/^[A-Za-z0-9_-]*$/, 'base64url');

const confirmInput = z.strictObject({
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

const tokenOf = (request: FastifyRequest) => (request.params as { token: string }).token;

export async function decisionLinkRoutes(app: FastifyInstance, options: DecisionLinkRoutesOptions): Promise<void> {
  const { db, gate, publicUrl } = options;
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

  app.get('/:token', { config: { rateLimit: { max: decisionLinkLimits.readsPerMinute, timeWindow: '1 minute' } } }, async (request) => ({
    success: true,
    data: await readDecisionLink(db, tokenOf(request)),
  }));

  // For an organization that needs approvals signed: the challenge the link's person's passkey signs (the review,
  // the payload digest the link was sent for, its verdict, now). Decides nothing. It names none of their passkeys
  // (whoever holds the link is not yet known to be them): the browser offers the person's own, and the confirm
  // takes only a passkey of the person the link was sent to.
  app.post('/:token/passkey-challenge', { config: { rateLimit: { max: decisionLinkLimits.readsPerMinute, timeWindow: '1 minute' } } }, async (request) => {
    const link = await decisionLinkToSign(db, tokenOf(request));
    return { success: true, data: approvalChallengeOf(publicUrl, { id: link.reviewId, digest: link.payloadDigest, verdict: link.verdict }) };
  });

  app.post('/:token/confirm', { config: { rateLimit: { max: decisionLinkLimits.confirmsPerMinute, timeWindow: '1 minute' } } }, async (request) => {
    // JSON only, body or not: a form of another site (which cannot send this type without CORS) never confirms.
    if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
      throw new AppError('unsupported_media_type', 'Confirm with a JSON body ({} will do) and Content-Type: application/json');
    }
    const input = confirmInput.parse(request.body ?? {});
    const review = await confirmDecisionLink(db, tokenOf(request), input, {
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
