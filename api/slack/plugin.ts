import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database';
import { reviewWebUrl } from '../../domain/gate/links';
import { findGatedWrite } from '../../domain/resources';
import type { OutboundRules } from '../../domain/notify/outbound';
import { SealedSecretError, type SecretBox } from '../../domain/kit/secret-box';
import { answerThroughResponseUrl } from '../../domain/notify/slack';
import { findSlackAppSecret } from '../../domain/notify/slack-app';
import { answerPress, parseInteraction } from '../../domain/notify/slack-interactions';
import { admitSlackRequest, verifySlackSignature } from '../../domain/notify/slack-requests';
import type { GateClient } from '../catalog/gate-client';

// Slack's interactivity Request URL: POST /slack/interactions/{organization id or slug}, a form whose `payload` is
// the press as JSON. The signature covers the raw body, so this plugin reads the form as text (its parser stays
// here: no other route takes forms). Slack wants an answer within 3 s: the request is verified and recorded, the
// verdict given with a short wait for the held write's workflow, and the answer to the press goes to its
// response_url after this answer.

export interface SlackInteractionsOptions {
  db: Database;
  /** Opens the organizations' Slack signing secrets, kept sealed. */
  secrets: SecretBox;
  gate: GateClient;
  publicUrl: string;
  /** Where response_url may point (Slack's hooks.slack.com in production; loopback in development and tests). */
  outbound: OutboundRules;
}

/** How long a press waits for the approved write to run before answering (Slack gives the whole request 3 s). */
const outcomeWaitMs = 2000;

export async function slackInteractions(app: FastifyInstance, options: SlackInteractionsOptions): Promise<void> {
  const { db, secrets, gate, publicUrl, outbound } = options;
  await app.register(async (slack) => {
    slack.removeAllContentTypeParsers();
    slack.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_request, body, done) => done(null, body));
    slack.post<{ Params: { org: string }; Body: string | undefined }>('/slack/interactions/:org', async (request, reply) => {
      const rawBody = typeof request.body === 'string' ? request.body : '';
      const signature = header(request.headers['x-slack-signature']);
      // A signing secret that does not open here (moved from another organization's row, or its key not held) is
      // no secret: the press is refused as an unsigned one, and the fault logged for the operator.
      const found = await findSlackAppSecret(db, secrets, request.params.org).catch((error: unknown) => {
        if (!(error instanceof SealedSecretError)) throw error;
        request.log.error({ err: error }, "an organization's Slack signing secret does not open");
        return undefined;
      });
      const slackApp = verifySlackSignature(found, {
        timestamp: header(request.headers['x-slack-request-timestamp']),
        signature,
        rawBody,
      });
      const press = parseInteraction(rawBody);
      await admitSlackRequest(db, slackApp, signature!, press);
      const answer = await answerPress(db, slackApp.orgId, press, {
        publicUrl,
        reviewUrl: (reviewId) => reviewWebUrl(publicUrl, reviewId),
        writeOf: findGatedWrite,
        reviewEnded: (workflowId, verdict) => gate.reviewDecided(workflowId, verdict, outcomeWaitMs),
        finishUrl: (reviewId) => reviewWebUrl(publicUrl, reviewId),
      });
      if (!answer) return reply.status(200).send();
      if (press.response_url) {
        answerThroughResponseUrl(press.response_url, answer.message, answer.replace, outbound).catch((error: unknown) =>
          request.log.warn({ err: error }, "a Slack press's answer could not be sent to its response_url"),
        );
      }
      // Slack shows nothing of this answer for a button press; it says the same, for anyone reading the exchange.
      return reply.status(200).send({ response_type: 'ephemeral', replace_original: false, text: answer.message.text });
    });
  });
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
