import type { Queryable } from '../../db/database';
import { changesetItemLines, changesetModeInWords } from '../gate/changesets/in-words';
import { getReview } from '../gate/reviews/reads';
import { heldPayloadDigest } from '../gate/reviews/signing';
import { unverifiedNameExplained } from '../kit/agent-names';
import { isAllowedNonPublicHost, postOutbound, type OutboundRules } from './outbound';

// What Gatehouse says in Slack: the held write's message (Block Kit, with Approve and Deny buttons bound to the
// exact payload it was sent for), and the messages that answer a press. `text` is always there: it is what
// notifications and clients without blocks show.

/** The buttons' action ids, as a press names them back (api/slack, domain/notify/slack-interactions.ts). */
export const slackActions = { approve: 'gatehouse.approve', deny: 'gatehouse.deny', open: 'gatehouse.open' } as const;

/** What a message says in Slack: the fallback text, and its blocks. */
export interface SlackMessage {
  text: string;
  blocks: unknown[];
}

/** A button's value: the review and the digest of the payload the message was sent for (`rev_…:<sha256 hex>`). */
export function buttonValue(reviewId: string, digest: string): string {
  return `${reviewId}:${digest}`;
}

export function parseButtonValue(value: string): { reviewId: string; digest: string } | undefined {
  const match = /^(rev_[0-9a-z]{1,60}):([0-9a-f]{64})$/.exec(value);
  return match ? { reviewId: match[1]!, digest: match[2]! } : undefined;
}

/** Slack's plain text (a header's or a button's) takes 150 characters at most: longer is cut, saying so. */
const plain = (text: string) => ({ type: 'plain_text', text: text.length > 150 ? `${text.slice(0, 149)}…` : text, emoji: false });
const mrkdwn = (text: string) => ({ type: 'mrkdwn', text: text.slice(0, 3000) });
/**
 * Text for Slack's markup with its three control characters escaped, as Slack asks: what an agent wrote (a connected
 * app's name among it) is shown as written, and never becomes a link (`<https://…|Approve here>`) or a mention.
 */
const escaped = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A held write's message: what was held and why, Approve and Deny for the payload it holds now, and its page. A
 * changeset's lists its items with their decisions; its buttons decide it whole (rejecting some items is done on
 * the review's page, which the message points to).
 */
export async function slackReviewMessage(
  db: Queryable,
  review: { id: string; orgId: string; headline: string; reason: string; link: string },
): Promise<SlackMessage> {
  const held = await getReview(db, review.orgId, review.id);
  const value = buttonValue(review.id, heldPayloadDigest(held));
  const { changeset } = held;
  const whole = changeset ? ` all ${changeset.items.length}` : '';
  const agent = held.submitted_by;
  return {
    text: `${escaped(review.headline)}\n${escaped(review.reason)}\n<${review.link}|Open the review>`,
    blocks: [
      { type: 'header', text: plain(review.headline) },
      ...(agent.api_key_label_verified ? [] : [{ type: 'context', elements: [mrkdwn(escaped(unverifiedNameExplained(agent.api_key_label)))] }]),
      { type: 'section', text: mrkdwn(`*Why it was held:* ${escaped(review.reason)}`) },
      ...(changeset
        ? [
            { type: 'section', text: mrkdwn(`*The ${changeset.items.length} writes:*\n${changesetItemLines(changeset).join('\n')}`) },
            { type: 'context', elements: [mrkdwn(changesetModeInWords(changeset))] },
          ]
        : []),
      {
        type: 'actions',
        block_id: 'gatehouse.review',
        elements: [
          { type: 'button', action_id: slackActions.approve, text: plain(`Approve${whole}`), style: 'primary', value },
          { type: 'button', action_id: slackActions.deny, text: plain(`Deny${whole}`), style: 'danger', value },
          { type: 'button', action_id: slackActions.open, text: plain('Open the review'), url: review.link },
        ],
      },
    ],
  };
}

/** A message without buttons: an outcome that replaces the held write's message, or a word to the one who pressed. */
export function slackNotice(text: string, link?: string): SlackMessage {
  return {
    text,
    blocks: [
      { type: 'section', text: mrkdwn(text) },
      ...(link ? [{ type: 'context', elements: [mrkdwn(`<${link}|Open the review>`)] }] : []),
    ],
  };
}

/**
 * Why a press's `response_url` is not posted to, or undefined when it may be: Slack's (https://hooks.slack.com/…),
 * or, where the outbound rules open loopback or private addresses (development, tests), a local stand-in at such an
 * address. The URL comes in the press: a press signed by whoever learnt the secret must not make Gatehouse post
 * anywhere else.
 */
export function responseUrlRefusal(responseUrl: string, policy: OutboundRules): string | undefined {
  let url: URL;
  try {
    url = new URL(responseUrl);
  } catch {
    return 'it is not a URL';
  }
  if (url.username || url.password) return 'it carries a user name or password';
  if (url.protocol === 'https:' && url.hostname === 'hooks.slack.com' && url.port === '') return undefined;
  if ((url.protocol === 'https:' || url.protocol === 'http:') && isAllowedNonPublicHost(url.hostname, policy)) return undefined;
  return `${url.origin} is not Slack's (https://hooks.slack.com/)`;
}

/**
 * Answers a press through its `response_url`: replacing the message it came from (`replace`), or, to the person
 * who pressed only, ephemeral. Fails, posting nothing, when the URL is not Slack's (responseUrlRefusal), and fails
 * when Slack does not take it.
 */
export async function answerThroughResponseUrl(responseUrl: string, message: SlackMessage, replace: boolean, policy: OutboundRules): Promise<void> {
  const refusal = responseUrlRefusal(responseUrl, policy);
  if (refusal) throw new Error(`refused to post to the response_url: ${refusal}`);
  const body = replace ? { ...message, replace_original: true } : { ...message, response_type: 'ephemeral', replace_original: false };
  const answer = await postOutbound(responseUrl, JSON.stringify(body), {}, { policy, timeoutMs: 5000 });
  if (answer.status < 200 || answer.status > 299) throw new Error(`Slack's response_url answered HTTP ${answer.status}`);
}
