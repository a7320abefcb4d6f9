import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database';
import { activityRecorder } from '../../domain/usage/call-log';
import type { Caller } from '../../domain/identity/actors';
import { authenticate } from '../../domain/identity/authenticate';
import { AppError } from '../../domain/kit/errors';
import { rateLimitedError, type RequestLimits } from '../../domain/usage/limits';
import type { Page } from '../../domain/kit/pagination';
import { etagOf } from '../../domain/kit/rows';
import { authorize } from '../catalog/access';
import type { GateClient } from '../catalog/gate-client';
import { submitGatedWrite } from '../catalog/gated-write';
import { catalog } from '../catalog/index';
import { pathParameters, type Operation, type OperationContext } from '../catalog/operation';
import { toAppError, validationError, type ErrorBody } from './errors';
import { gateAnswerToHttp } from './gated-answer';
import { rateLimitHeaders } from './rate-limit-headers';

export interface RestOptions {
  db: Database;
  gate: GateClient;
  /** Absolute URL of the REST base, ending in /api. */
  apiBaseUrl: string;
  limits: RequestLimits;
}

/** Every catalog operation on both route shapes: /v1/<path> and /v1/organizations/{slug}/<path>. */
export async function restRoutes(app: FastifyInstance, options: RestOptions): Promise<void> {
  // The activity record: one row per authenticated call, written once the answer has gone out.
  const activity = activityRecorder(options.db, (error) => app.log.warn({ err: error }, 'activity not recorded'));
  const requestStarts = new WeakMap<FastifyRequest, number>();
  app.addHook('onRequest', (request, _reply, done) => {
    requestStarts.set(request, performance.now());
    done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    const call = calls.get(request);
    if (call) call.outcome = toAppError(error).code;
    done();
  });
  const record = (request: FastifyRequest, status: number, latencyMs: number, aborted: boolean) => {
    const call = calls.get(request);
    if (!call) return;
    calls.delete(request);
    const { actor, organization } = call.caller;
    activity.record({
      orgId: organization.id,
      apiKeyId: actor.kind === 'api_key' ? actor.keyId : null,
      userId: actor.kind === 'person' ? actor.userId : null,
      interface: 'rest',
      operation: call.operation,
      tool: null,
      status,
      outcome: aborted ? 'client_aborted' : (call.outcome ?? (status >= 400 ? 'internal_error' : 'ok')),
      latencyMs,
    });
  };
  app.addHook('onResponse', (request, reply, done) => {
    record(request, reply.statusCode, reply.elapsedTime, false);
    done();
  });
  // A client that hangs up gets no answer, but what it asked for may still have happened: keep the record.
  app.addHook('onRequestAbort', (request, done) => {
    record(request, 499, performance.now() - (requestStarts.get(request) ?? performance.now()), true);
    done();
  });
  app.addHook('onClose', () => activity.drain());

  for (const operation of catalog) {
    const handler = (request: FastifyRequest, reply: FastifyReply) => handle(operation, request, reply, options);
    app.route({ method: operation.method, url: `/v1${operation.path}`, handler });
    app.route({ method: operation.method, url: `/v1/organizations/:org_slug${operation.path}`, handler });
  }
}

/** What the activity record needs of an authenticated call; requests that never authenticated have none. */
interface RecordedCall {
  operation: string;
  caller: Caller;
  /** Set for gated writes and errors; otherwise the call is ok. */
  outcome?: string;
}
const calls = new WeakMap<FastifyRequest, RecordedCall>();

async function handle(operation: Operation, request: FastifyRequest, reply: FastifyReply, options: RestOptions) {
  const caller = await authenticate(options.db, request.headers.authorization);
  const call: RecordedCall = { operation: operation.name, caller };
  calls.set(request, call);
  // Every authenticated request counts, whatever it is answered; the headers go on every answer, refusals included.
  const verdict = await options.limits.count(caller, 'rest');
  if (verdict) {
    reply.headers(rateLimitHeaders(verdict));
    if (!verdict.admitted) throw rateLimitedError(caller, 'rest', verdict);
  }
  const params = request.params as Record<string, string>;
  if (params.org_slug !== undefined && params.org_slug !== caller.organization.slug) {
    throw new AppError('organization_mismatch', `This token belongs to another organization than "${params.org_slug}"`);
  }
  authorize(operation, caller);
  const input = parseInput(operation, request, params);
  const context: OperationContext = {
    db: options.db,
    gate: options.gate,
    caller,
    interface: 'rest',
    apiBaseUrl: options.apiBaseUrl,
    catalog,
    limits: options.limits,
    usage: verdict?.today,
  };

  if (operation.kind === 'gated_write') {
    const idempotencyKey = request.headers['idempotency-key'];
    const submitted = await submitGatedWrite(
      operation,
      input,
      context,
      Array.isArray(idempotencyKey) ? idempotencyKey[0] : idempotencyKey,
    );
    const answer = gateAnswerToHttp(operation, submitted.answer, options.apiBaseUrl);
    // pending_review, policy_denied, or the error a failed write answered.
    call.outcome = submitted.answer.outcome === 'applied' ? 'applied' : (answer.body as ErrorBody).error.code;
    reply.headers({ ...answer.headers, ...etagHeader(submitted.answer.outcome === 'applied' ? submitted.answer.result : undefined) });
    reply.header('x-gatehouse-workflow-id', submitted.workflowId);
    if (submitted.replayed) reply.header('idempotent-replayed', 'true');
    return reply.status(answer.status).send(answer.body);
  }

  const data = await operation.handler(input, context);
  if (operation.kind === 'read' && operation.list) {
    const page = data as Page<unknown>;
    return reply.send({ success: true, data: page.items, page: { next_cursor: page.nextCursor } });
  }
  reply.headers(etagHeader(data));
  return reply.send({ success: true, data });
}

/** A single record's ETag is its version, for If-Match on the next update. */
function etagHeader(data: unknown): Record<string, string> {
  const version = (data as { version?: unknown } | null)?.version;
  return typeof version === 'number' ? { etag: etagOf(version) } : {};
}

/** One input object per operation: path parameters, plus the query (GET) or the JSON body (writes). */
function parseInput(operation: Operation, request: FastifyRequest, params: Record<string, string>): unknown {
  const fromPath = Object.fromEntries(pathParameters(operation.path).map((name) => [name, params[name]]));
  let rest: unknown;
  if (operation.method === 'GET' || operation.method === 'DELETE') {
    rest = request.query ?? {};
  } else {
    rest = request.body ?? {};
    if (typeof rest !== 'object' || rest === null || Array.isArray(rest)) {
      throw new AppError('validation_failed', 'The request body must be a JSON object', {
        fields: [{ field: '(body)', message: 'must be a JSON object' }],
      });
    }
  }
  const ifMatch = request.headers['if-match'];
  const fromHeaders = 'if_match' in operation.input.shape && typeof ifMatch === 'string' ? { if_match: ifMatch } : {};
  const parsed = operation.input.safeParse({ ...(rest as object), ...fromHeaders, ...fromPath });
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}
