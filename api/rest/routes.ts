import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CallPipeline, Credential } from '../catalog/call';
import { catalog } from '../catalog/index';
import { isOfferedOn, pathParameters, type Operation } from '../catalog/operation';
import type { AppError, FieldProblem } from '../../domain/kit/errors';
import { httpAnswer } from './answer';
import { rateLimitHeaders } from './http';

export interface RestOptions {
  pipeline: CallPipeline;
}

/**
 * The interfaces that speak this REST dialect: the agents' API under /api (bearer tokens, both route shapes) and
 * the console's under /console/api (a session; the signed-in person's own organization only).
 */
export interface RestDialect {
  via: 'rest' | 'console';
  credentialOf(request: FastifyRequest): Credential;
  /** Whether the /v1/organizations/{slug}/… shape is offered too. */
  explicitOrganization: boolean;
  /** The WWW-Authenticate header of a refusal, where the dialect gives one (the agents' scope challenge). */
  challengeOf?(error: AppError): string | undefined;
}

export const agentsDialect: RestDialect = {
  via: 'rest',
  credentialOf: (request) => ({ via: 'rest', authorization: request.headers.authorization }),
  explicitOrganization: true,
};

/** Input fields a REST client sends as a request header rather than in the query or body. */
export const headerFields: Record<string, string> = { if_match: 'If-Match' };

/** Every catalog operation the dialect offers, at /v1/<path> (and /v1/organizations/{slug}/<path> for agents). */
export async function restRoutes(app: FastifyInstance, options: RestOptions & { dialect: RestDialect }): Promise<void> {
  for (const operation of catalog.filter((candidate) => isOfferedOn(candidate, options.dialect.via))) {
    const wire = wireOf(operation);
    const handler = (request: FastifyRequest, reply: FastifyReply) => handle(operation, wire, request, reply, options);
    app.route({ method: operation.method, url: `/v1${operation.path}`, handler });
    if (options.dialect.explicitOrganization) app.route({ method: operation.method, url: `/v1/organizations/:org_slug${operation.path}`, handler });
  }
}

/** Where an operation's input fields travel besides the query or body: the path, and request headers. */
interface Wire {
  fromPath: string[];
  /** Input field and the header that carries it. */
  fromHeaders: [string, string][];
}

function wireOf(operation: Operation): Wire {
  return {
    fromPath: pathParameters(operation.path),
    fromHeaders: Object.entries(headerFields)
      .filter(([field]) => field in operation.input.shape)
      .map(([field, header]) => [field, header.toLowerCase()]),
  };
}

async function handle(
  operation: Operation,
  wire: Wire,
  request: FastifyRequest,
  reply: FastifyReply,
  { pipeline, dialect }: RestOptions & { dialect: RestDialect },
) {
  const admission = await pipeline.admit(dialect.credentialOf(request));
  const params = request.params as Record<string, string>;
  const idempotencyKey = request.headers['idempotency-key'];
  const { input, misplaced } = inputOf(operation, wire, request, params);
  const outcome = await pipeline.call(admission, {
    operation,
    input,
    misplaced,
    orgSlug: params.org_slug,
    idempotencyKey: Array.isArray(idempotencyKey) ? idempotencyKey[0] : idempotencyKey,
  });
  const answer = httpAnswer(operation, outcome);
  const refusal = outcome.kind === 'refused' || outcome.kind === 'failed' ? outcome.error : undefined;
  const challenge = refusal && dialect.challengeOf?.(refusal);
  if (challenge) reply.header('www-authenticate', challenge);
  return reply.status(answer.status).headers({ ...rateLimitHeaders(admission.verdict), ...answer.headers }).send(answer.body);
}

/**
 * One input object per operation: the query (GET, DELETE) or the JSON body (POST, PATCH), the fields sent as
 * headers, and the path parameters. A body that is not an object is handed on as it is, for the call to refuse.
 * A field that travels in the path or a header is taken from there alone: sent in the body or query as well, it
 * would be silently ignored, so the call refuses it like any other field the client may not set.
 */
function inputOf(operation: Operation, wire: Wire, request: FastifyRequest, params: Record<string, string>): { input: unknown; misplaced?: FieldProblem[] } {
  const inQuery = operation.method === 'GET' || operation.method === 'DELETE';
  // No body at all is an empty input (approve without a comment); a body of `null` is a body, and not an object.
  const fields = inQuery ? (request.query ?? {}) : request.body === undefined ? {} : request.body;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return { input: fields };
  const input: Record<string, unknown> = { ...fields };
  const carriedElsewhere = [
    ...wire.fromPath.map((name) => [name, 'the path'] as const),
    ...wire.fromHeaders.map(([field, header]) => [field, `the ${headerFields[field] ?? header} header`] as const),
  ];
  const misplaced = carriedElsewhere
    .filter(([name]) => Object.hasOwn(fields, name))
    .map(([field, where]) => ({ field, message: `is taken from ${where}; leave it out of the ${inQuery ? 'query' : 'body'}` }));
  for (const [field, header] of wire.fromHeaders) {
    const value = request.headers[header];
    if (typeof value === 'string') input[field] = value;
  }
  for (const name of wire.fromPath) input[name] = params[name];
  return { input, misplaced };
}
