import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database } from '../../db/database';
import { AppError } from '../kit/errors';
import type { SlackAppSecret } from './slack-app';

// Whether a request came from the organization's Slack app, as Slack documents it ("Verifying requests from
// Slack"): `v0=` + the hex HMAC-SHA256, keyed with the app's signing secret, of `v0:<timestamp>:<raw body>`, sent as
// X-Slack-Signature with the timestamp as X-Slack-Request-Timestamp; a timestamp more than five minutes off is
// refused, and so is a request seen before.

/** How far a request's timestamp may be from now. */
export const slackTimestampWindowMs = 5 * 60 * 1000;

/** How long a request's signature is kept to refuse it again: longer than the window, then swept. */
const seenKeptMs = 2 * slackTimestampWindowMs;

export interface SignedSlackRequest {
  timestamp: string | undefined;
  signature: string | undefined;
  rawBody: string;
}

const refused = (why: string) => new AppError('unauthorized', `This request is not from this organization's Slack app: ${why}`);

/**
 * The one answer when the organization is unknown, has no signing secret, or the signature does not match: the same
 * for all three, so that the endpoint tells nobody which organizations exist or have a Slack app.
 */
const notSigned = () => refused("it is not signed with the signing secret of the organization its Request URL names (Settings → Notifications shows both)");

/** A key for the signature nobody can match, so that an organization without a secret takes as long as a mismatch. */
const noSecret = randomBytes(32).toString('hex');

/**
 * The Slack app the request is from: throws `unauthorized` unless the request is signed with the app's secret and its
 * timestamp is within the window. `app`: the organization's Slack app, undefined when the Request URL names no
 * organization with a signing secret. What is checked before the organization (headers, the timestamp) is the same
 * for every organization, and every answer after it is one.
 */
export function verifySlackSignature<App extends { signingSecret: string }>(app: App | undefined, request: SignedSlackRequest, now = Date.now()): App {
  const { timestamp, signature, rawBody } = request;
  if (!timestamp || !signature) throw refused('X-Slack-Request-Timestamp and X-Slack-Signature are required');
  if (!/^\d{1,12}$/.test(timestamp)) throw refused('X-Slack-Request-Timestamp is not a Unix time');
  if (Math.abs(now - Number(timestamp) * 1000) > slackTimestampWindowMs) throw refused('its timestamp is more than five minutes from now');
  const expected = Buffer.from(`v0=${createHmac('sha256', app?.signingSecret ?? noSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`);
  const given = Buffer.from(signature);
  if (!app || given.length !== expected.length || !timingSafeEqual(given, expected)) throw notSigned();
  return app;
}

/**
 * Records a verified request as seen, and binds the organization to its Slack workspace at the first one: refused
 * when the same signature was seen before (a replay), or when the workspace the press was made in or the one the
 * Slack user belongs to (a Slack Connect user of another workspace, in a shared channel) is not the one bound.
 * Requests seen longer ago than the window are swept on the way.
 */
export async function admitSlackRequest(db: Database, app: SlackAppSecret, signature: string, press: { teamId: string; userTeamId: string }): Promise<void> {
  const { teamId, userTeamId } = press;
  const stranger = (bound: string) => [teamId, userTeamId].find((team) => team !== bound);
  const elsewhere = app.teamId === null ? undefined : stranger(app.teamId);
  if (elsewhere) throw new AppError('unauthorized', `This organization's Slack app is bound to the workspace ${app.teamId}, not ${elsewhere}`);
  if (userTeamId !== teamId) {
    throw new AppError('unauthorized', `The Slack user is of the workspace ${userTeamId}, not ${teamId} where they pressed: presses by users of another workspace are refused`);
  }
  const digest = createHash('sha256').update(signature).digest('hex');
  await db.transaction(async (tx) => {
    await tx.query('DELETE FROM slack_requests_seen WHERE org_id = $1 AND seen_at < now() - make_interval(secs => $2 / 1000.0)', [app.orgId, seenKeptMs]);
    const added = await tx.query('INSERT INTO slack_requests_seen (org_id, signature_digest) VALUES ($1, $2) ON CONFLICT DO NOTHING', [app.orgId, digest]);
    if (!added.rowCount) throw new AppError('unauthorized', 'This request was received before: a replayed Slack request is refused');
    if (app.teamId === null) {
      const bound = await tx.query('UPDATE slack_apps SET team_id = $2, updated_at = now() WHERE org_id = $1 AND team_id IS NULL', [app.orgId, teamId]);
      // Bound meanwhile, by another request or an owner: it must be the same workspace.
      if (!bound.rowCount) {
        const { rows } = await tx.query('SELECT team_id FROM slack_apps WHERE org_id = $1', [app.orgId]);
        if (rows[0]?.team_id !== teamId) throw new AppError('unauthorized', `This organization's Slack app is bound to another workspace, not ${teamId}`);
      }
    }
  });
}
