import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
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

/** Throws `unauthorized` unless the request is signed with the secret and its timestamp is within the window. */
export function verifySlackSignature(secret: string, request: SignedSlackRequest, now = Date.now()): void {
  const { timestamp, signature, rawBody } = request;
  if (!timestamp || !signature) throw refused('X-Slack-Request-Timestamp and X-Slack-Signature are required');
  if (!/^\d{1,12}$/.test(timestamp)) throw refused('X-Slack-Request-Timestamp is not a Unix time');
  if (Math.abs(now - Number(timestamp) * 1000) > slackTimestampWindowMs) throw refused('its timestamp is more than five minutes from now');
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`);
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused('its signature does not match the signing secret');
}

/**
 * Records a verified request as seen, and binds the organization to its Slack workspace at the first one: refused
 * when the same signature was seen before (a replay) or the workspace is not the one bound. Requests seen longer
 * ago than the window are swept on the way.
 */
export async function admitSlackRequest(db: Database, app: SlackAppSecret, signature: string, teamId: string): Promise<void> {
  if (app.teamId !== null && app.teamId !== teamId) {
    throw new AppError('unauthorized', `This organization's Slack app is bound to the workspace ${app.teamId}, not ${teamId}`);
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
