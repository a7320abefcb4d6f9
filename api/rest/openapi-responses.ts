import { z } from 'zod';
import { remediationSchema } from '../../domain/gate/remediation';
import { roles } from '../../domain/identity/actors';
import { errorStatus, type ErrorCode } from '../../domain/kit/errors';
import { pathParameters, type Operation } from '../catalog/operation';
import type { JsonSchema } from './json-schema';

/** What each refusal means to a caller; a new error code does not compile until it is explained here. */
const meaning: Record<ErrorCode, string> = {
  unauthorized: 'the bearer token is missing, malformed, unknown or revoked',
  api_access_disabled: 'the organization has turned API access off',
  read_only_key: 'the key is read-only and this is a write',
  insufficient_ability: 'the key lacks the ability this operation needs, or a personal token called an operation that is for API keys',
  insufficient_scope: "an OAuth access token was not granted the scopes this operation needs (WWW-Authenticate names them: the client may ask the person for them)",
  person_required: 'only a person may do this, with a personal token; API keys never can',
  insufficient_role: "the person's role is not one this operation allows",
  csrf_failed: "a console call that changes something came without the session's `X-CSRF-Token` (the console's own, never the API's)",
  sign_in_required: 'an Approve decision link of an organization that asks for its person signed in, confirmed without a console session (the console)',
  wrong_person: 'an Approve decision link confirmed signed in as another person than the one it was sent to (the console)',
  link_invalid: 'the one-time link to set a password has expired or was used already (the console)',
  policy_denied:
    "the organization's policy denied the write; nothing was written (`details` names the policies, and `details.remediation` the rules' reasons, hints and what they look at)",
  self_approval:
    "the person created the API key that made the held write, and the organization does not allow self-approval; another reviewer must approve it",
  set_up_by_key_creator:
    "a set-password link given to someone else (no email was configured) ties the person to the one who created the API key that made the held write, either way or along a chain of such links (or to who held the creator's account when the key was made): one could act as the other; another reviewer must approve it",
  passkey_required:
    "the organization needs every approval signed with the approver's passkey, which this way of approving cannot carry (a personal access token, a Slack button); `details.finish_url` is the page to finish it on",
  passkey_failed: "the passkey's assertion over this approval did not verify (another person's passkey, another payload or verdict, or too old); nothing was decided",
  payload_changed:
    'the held write has changed (a reviewer edited it) since the link or challenge was made for it; nothing was decided: read the review again and decide the write it holds now',
  feature_not_in_plan: "the organization's plan does not include this feature",
  organization_mismatch: "the `slug` in the path is not the token's organization",
  not_found: 'no such record in this organization',
  method_not_allowed: 'the path does not take this method',
  conflict: 'the request conflicts with the data as it is now (a review already decided, a write that clashes)',
  payload_too_large: 'the request body is larger than the API accepts',
  unsupported_media_type: 'the body is not sent as `Content-Type: application/json`',
  invalid_json: 'the body is not valid JSON',
  bad_request: 'the request could not be read as HTTP: a malformed path (bad percent-encoding, say) or header',
  request_timeout: 'the request (its headers and body) did not arrive within 60 seconds',
  uri_too_long: 'a segment of the path is longer than any id or slug can be',
  headers_too_large: 'the request line and headers together are too large (a very long query string, say)',
  validation_failed: 'the input is not valid; `details.fields` names each field and what is wrong with it',
  idempotency_key_reused: 'this `Idempotency-Key` was used before with another body',
  rate_limited:
    "the token's per-minute ceiling, the organization's daily budget, the key's own daily budget or the key's daily cap of writes for this operation is reached; `details.limit` says which (`per_minute`, `daily`, `key_daily` or `key_operation_daily`, with `details.operation` and `details.cap`), `Retry-After` and `details.retry_after_seconds` when to retry",
  review_queue_full:
    "the policy would hold this write for review, but the organization's review queue is at its plan's cap; nothing was queued or written. Retry once reviewers have worked the queue (with a new `Idempotency-Key`: this answer is kept for the old one)",
  internal_error: 'something failed on our side; it has been logged',
  unavailable:
    'the service could not reach its database or Temporal in time; retry later. For a gated write: it was not decided in time and may still be applied (`details.workflow_id` names it); retry with the same `Idempotency-Key` to learn its outcome',
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The rate-limit headers, as `components/headers`. */
export const rateLimitHeaderComponents = {
  RateLimitLimit: {
    description:
      "The ceiling of the limit nearest exhaustion for this request: the token's per-minute ceiling for this interface, or the organization's daily budget (REST and MCP together)",
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitRemaining: {
    description: 'Requests left under that limit, this one counted',
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimitReset: {
    description:
      "Seconds until that limit starts again (the next UTC minute, or midnight in the organization's time zone)",
    schema: { type: 'integer', minimum: 1 },
  },
  RetryAfter: {
    description: 'With `rate_limited`: seconds to wait before the next request can be admitted',
    schema: { type: 'integer', minimum: 1 },
  },
};

const headerRef = (name: keyof typeof rateLimitHeaderComponents) => ({ $ref: `#/components/headers/${name}` });

/** On every answer to an authenticated request, refusals included. */
export const rateLimitHeaders = {
  'X-RateLimit-Limit': headerRef('RateLimitLimit'),
  'X-RateLimit-Remaining': headerRef('RateLimitRemaining'),
  'X-RateLimit-Reset': headerRef('RateLimitReset'),
};

/** Refusals given before a request is counted (no valid token, a body that cannot be read), which carry no rate-limit headers. */
const answeredUncounted: ReadonlySet<ErrorCode> = new Set(['unauthorized', 'invalid_json', 'payload_too_large', 'unsupported_media_type', 'internal_error']);

/** The envelopes every operation shares, as `components/schemas`. */
export const envelopeSchemas: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: { type: 'string', enum: Object.keys(errorStatus), description: 'What went wrong, for programs to branch on' },
      message: { type: 'string', description: 'What went wrong, for people (and agents) to read' },
      details: { type: 'object', description: 'More about the error where useful, e.g. `fields` for validation_failed' },
    },
  },
  ErrorEnvelope: {
    type: 'object',
    required: ['success', 'error'],
    properties: { success: { const: false }, error: ref('Error') },
  },
  PageInfo: {
    type: 'object',
    required: ['next_cursor'],
    properties: {
      next_cursor: {
        type: ['string', 'null'],
        description: 'Pass as `cursor` to fetch the next page; null on the last page',
      },
    },
  },
  Remediation: (({ $schema: _dialect, ...schema }) => schema)(z.toJSONSchema(remediationSchema, { target: 'draft-2020-12', io: 'output' })),
  ReviewTicket: {
    type: 'object',
    required: ['id', 'status', 'url', 'web_url', 'expires_at'],
    properties: {
      id: { type: 'string', description: 'The review id' },
      status: { const: 'pending' },
      url: { type: 'string', format: 'uri', description: 'Where to read the review (GET); also in the Location header' },
      web_url: { type: 'string', format: 'uri', description: "The review's page in the console, where a person approves or denies it: give it to your user" },
      expires_at: { type: 'string', format: 'date-time', description: 'If no person decides by then, the write never runs' },
    },
  },
  PendingReviewEnvelope: {
    type: 'object',
    required: ['success', 'error', 'review'],
    properties: {
      success: { const: false },
      error: {
        type: 'object',
        required: ['code', 'message', 'details'],
        properties: {
          code: { const: 'pending_review' },
          message: { type: 'string', description: 'Why the write is held' },
          details: {
            type: 'object',
            required: ['decision_id', 'policy_ids'],
            properties: {
              decision_id: { type: 'string' },
              policy_ids: { type: 'array', items: { type: 'string' }, description: 'The policies that held the write' },
              remediation: ref('Remediation'),
            },
          },
        },
      },
      review: ref('ReviewTicket'),
    },
  },
  PolicyDeniedEnvelope: {
    type: 'object',
    required: ['success', 'error'],
    properties: {
      success: { const: false },
      error: {
        type: 'object',
        required: ['code', 'message', 'details'],
        properties: {
          code: { const: 'policy_denied' },
          message: { type: 'string' },
          details: {
            type: 'object',
            required: ['reason', 'decision_id', 'policy_ids'],
            properties: {
              reason: { type: 'string', description: 'Why the policy denied the write' },
              decision_id: { type: 'string' },
              policy_ids: { type: 'array', items: { type: 'string' }, description: 'The policies that decided' },
              remediation: ref('Remediation'),
            },
          },
        },
      },
    },
  },
};

export const gatedWriteHeaders = {
  'X-Gatehouse-Workflow-Id': {
    description: 'The Temporal workflow that decided (and, on Allow, applied) the write',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` when this answer repeats the first answer given to the same `Idempotency-Key`',
    schema: { type: 'string', const: 'true' },
  },
};

/** A gated write held for review; the same for every gated write. */
export const pendingReviewResponse = {
  description: "Held for a person's review (`pending_review`): nothing is written unless a reviewer approves before `review.expires_at`",
  headers: {
    Location: { description: 'The review, to follow its outcome', schema: { type: 'string', format: 'uri' } },
    ...gatedWriteHeaders,
    ...rateLimitHeaders,
  },
  content: { 'application/json': { schema: ref('PendingReviewEnvelope') } },
};

/** Every refusal the operation can answer on one route shape, in the order of domain/errors. */
export function possibleErrors(operation: Operation, explicitOrganization: boolean): ErrorCode[] {
  const codes = new Set<ErrorCode>(['unauthorized', 'api_access_disabled', 'validation_failed', 'rate_limited', 'internal_error', 'unavailable']);
  const { apiKey, person } = operation.access;
  if (!apiKey) codes.add('person_required');
  if (apiKey?.ability || !person) codes.add('insufficient_ability');
  if (person && !roles.every((role) => person.roles.includes(role))) codes.add('insufficient_role');
  if (operation.feature) codes.add('feature_not_in_plan');
  if (explicitOrganization) codes.add('organization_mismatch');
  if (pathParameters(operation.path).length > 0) codes.add('not_found');
  if (operation.method === 'POST' || operation.method === 'PATCH') {
    for (const code of ['invalid_json', 'payload_too_large', 'unsupported_media_type'] as const) codes.add(code);
  }
  if (operation.kind === 'gated_write') {
    for (const code of ['read_only_key', 'policy_denied', 'conflict', 'idempotency_key_reused', 'review_queue_full'] as const) codes.add(code);
  }
  if (operation.kind === 'person_action') {
    codes.add('conflict');
    for (const code of operation.refusals ?? []) codes.add(code);
  }
  return (Object.keys(errorStatus) as ErrorCode[]).filter((code) => codes.has(code));
}

/**
 * The error answers of one route, one per HTTP status, each naming its codes. Routes that refuse alike share
 * one entry of `components/responses` (added to `shared`), named for its codes: `OrganizationMismatchOrNotFound`.
 */
export function errorResponses(
  operation: Operation,
  explicitOrganization: boolean,
  shared: Record<string, unknown>,
): Record<string, { $ref: string }> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of possibleErrors(operation, explicitOrganization)) {
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  }
  const responses: Record<string, { $ref: string }> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const name = codes.map((code) => code.replace(/(^|_)([a-z])/g, (_match, _separator, letter: string) => letter.toUpperCase())).join('Or');
    shared[name] ??= errorResponse(codes);
    responses[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return responses;
}

function errorResponse(codes: ErrorCode[]): unknown {
  const plain = codes.filter((code) => code !== 'policy_denied');
  const narrowed = {
    allOf: [ref('ErrorEnvelope'), { properties: { error: { properties: { code: { enum: plain } } } } }],
  };
  const denied = codes.includes('policy_denied');
  const counted = codes.some((code) => !answeredUncounted.has(code));
  const headers = {
    ...(denied ? gatedWriteHeaders : {}),
    ...(counted ? rateLimitHeaders : {}),
    ...(codes.includes('rate_limited') ? { 'Retry-After': headerRef('RetryAfter') } : {}),
  };
  return {
    description: codes.map((code) => `- \`${code}\`: ${meaning[code]}`).join('\n'),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: denied ? { oneOf: [ref('PolicyDeniedEnvelope'), narrowed] } : narrowed } },
  };
}
