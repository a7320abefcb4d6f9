import type { Mailer } from '../../domain/notify/mailer';
import type { OutboundRules } from '../../domain/notify/outbound';
import type { SecretBox } from '../../domain/kit/secret-box';
import type { Database } from '../../db/database';
import { calls, gatedWriteSeconds, gatedWritesTotal, limitRefusals } from '../../metrics';
import type { Interface } from '../../domain/gate/contract';
import type { Caller } from '../../domain/identity/actors';
import { resumeSession, type SessionRules } from '../../domain/identity/sessions';
import { secretsMatch } from '../../domain/identity/tokens';
import { AppError, asRefusal, invalidFields, toAppError, type FieldProblem } from '../../domain/kit/errors';
import type { Page } from '../../domain/kit/pagination';
import { callLogWriter, type CallInterface } from '../../domain/usage/call-log';
import { createRequestLimits, rateLimitedError, type RequestVerdict } from '../../domain/usage/limits';
import { apiAccessRefusal, authorize, isAllowed, scopeShortfall } from './access';
import type { GateClient } from './gate-client';
import { catalog } from './index';
import { isOfferedOn, type Operation, type OperationContext } from './operation';
import { codeOf, statusOf, type CallOutcome } from './outcome';
import { submitGatedWrite } from './submit-write';

// The one way an operation is called, whatever the interface: REST, MCP and the people's console translate
// their wire format into these two steps and render the outcome.
//
//   admit   authenticate (a bearer token for REST and MCP, a session for the console: never the one for the
//           other), count the agents' calls against the plan's limits (every authenticated request counts,
//           refused ones too), and apply the interface's own rule (MCP: API keys of organizations with API
//           access; the console: the session's cross-site request token on every state-changing call)
//   call    the organization in the path, access and plan, parse the input, run the read, gated write or
//           person's action, and end in a typed outcome, which the call log records

/** Who is calling, counted against the limits; `admitted: false` when the limits or the interface refuse them. */
export type Admission = {
  caller: Caller;
  via: CallInterface;
  /** What the limits counted (every answer to the request tells it, refusals included); undefined when they are off. */
  verdict: RequestVerdict | undefined;
  /** When the request arrived (performance.now()): the call's latency runs from here. */
  startedAt: number;
} & ({ admitted: true } | { admitted: false; refusal: AppError });

export interface CallRequest {
  /** The operation asked for; undefined when the interface's name for it matches none (an unknown MCP tool). */
  operation: Operation | undefined;
  /** The name the interface asked for it by, where it has its own (the MCP tool). */
  tool?: string;
  /** The unparsed input, gathered from the wire (path, query or body, headers). */
  input: unknown;
  /** Fields the client sent where the interface does not read them (`id` in a body, when the path carries it). */
  misplaced?: FieldProblem[];
  /** The organization named in an explicit-organization path. */
  orgSlug?: string;
  idempotencyKey?: string;
}

/** What a request proves who it is with: the agents' interfaces take a bearer token, the console a session. */
export type Credential =
  | { via: Interface; authorization: string | undefined }
  | {
      via: 'console';
      /** The session cookie's value. */
      session: string | undefined;
      /** The X-CSRF-Token header, required when the call changes something. */
      csrfToken: string | undefined;
      changesState: boolean;
      /** False for what a page does by itself (a live refresh): it does not keep an idle session alive. */
      activity: boolean;
    };

export interface CallPipeline {
  /**
   * Refuses a missing, unknown or ended credential with 401 (no one to count or record); anything else is an
   * Admission.
   */
  admit(credential: Credential): Promise<Admission>;
  /** Never throws: every call ends in an outcome, recorded in the call log. */
  call(admission: Admission, request: CallRequest): Promise<CallOutcome>;
  /** Waits for the call log's last rows and the limits' housekeeping. */
  close(): Promise<void>;
}

export interface CallPipelineOptions {
  db: Database;
  gate: GateClient;
  /** Absolute URL of the REST base (`…/api`), for links in answers; the REST API's resource identifier (OAuth). */
  apiBaseUrl: string;
  /** The MCP server's resource identifier (`…/mcp`): an OAuth access token must be for it. */
  mcpResource: string;
  /** Where people reach the console (`http://localhost:3000`), for links to its pages. */
  publicUrl: string;
  /** Where webhook endpoints may point. */
  outbound: OutboundRules;
  /** Email to people (SMTP_URL): absent, none is sent, and set-password links are answered to whoever asked. */
  mailer?: Mailer;
  /** Seals and opens the secrets kept in the database. */
  secrets: SecretBox;
  /** Where "now" comes from for the limits (the minute, the organization's day); tests move it. */
  clock?: () => Date;
  /** The plan's request limits; off (false) only to measure their cost in the benchmark. */
  rateLimits?: boolean;
  /** Told of what failed on our side (a fault, a call log row not written); refusals are answers, not incidents. */
  log: (error: unknown, message: string) => void;
  /** How long console sessions live. */
  sessions: SessionRules;
}

export function createCallPipeline(options: CallPipelineOptions): CallPipeline {
  const { db, gate, apiBaseUrl } = options;
  const limits = createRequestLimits({ db, clock: options.clock, enabled: options.rateLimits ?? true });
  const callLog = callLogWriter(db, (error) => options.log(error, 'call log row not written'));

  async function run(admission: Admission & { admitted: true }, request: CallRequest): Promise<CallOutcome> {
    const { caller, via } = admission;
    const { operation } = request;
    let input: Record<string, unknown>;
    try {
      if (!operation) throw new AppError('not_found', `No tool ${request.tool ?? ''}: see the tools this key has in tools/list`);
      if (!isOfferedOn(operation, via)) throw new AppError('not_found', `${operation.name} is not offered here`);
      if (request.orgSlug !== undefined && request.orgSlug !== caller.organization.slug) {
        throw new AppError('organization_mismatch', `This token belongs to another organization than "${request.orgSlug}"`);
      }
      // An MCP client is offered only the tools its key may use; to it, any other does not exist.
      // (A connected client's token is told which scopes the tool needs instead: the scope challenge.)
      if (via === 'mcp' && !isAllowed(operation, caller) && !scopeShortfall(operation, caller)) {
        throw new AppError('not_found', `Tool ${request.tool ?? operation.name} not found for this key`);
      }
      authorize(operation, caller);
      if (request.misplaced?.length) throw invalidFields(request.misplaced);
      input = parse(operation, request.input);
    } catch (error) {
      const refusal = asRefusal(error);
      return refusal ? { kind: 'refused', error: refusal } : failed(error, `${request.operation?.name ?? request.tool} could not be read`);
    }

    const context: OperationContext = { db, gate, caller, interface: via, apiBaseUrl, publicUrl: options.publicUrl, outbound: options.outbound, mailer: options.mailer, secrets: options.secrets, log: options.log, catalog, limits, usage: admission.verdict?.today };
    try {
      switch (operation.kind) {
        case 'gated_write':
          return { kind: 'gated', submitted: await submitGatedWrite(operation, input, context, request.idempotencyKey) };
        case 'read': {
          const data = await operation.handler(input, context);
          return operation.list ? { kind: 'page', page: data as Page<unknown> } : { kind: 'data', data };
        }
        case 'person_action':
          return { kind: 'data', data: await operation.handler(input, context) };
      }
    } catch (error) {
      return failed(error, `${operation.name} failed`);
    }
  }

  /** What failed while a call ran; what failed on our side (500, 503) is logged, refusals are answers. */
  function failed(error: unknown, message: string): CallOutcome {
    const failure = toAppError(error);
    if (failure.status >= 500) options.log(error, message);
    return { kind: 'failed', error: failure };
  }

  return {
    async admit(credential) {
      const startedAt = performance.now();
      if (credential.via === 'console') {
        const resumed = await resumeSession(db, credential.session, options.sessions, { touch: credential.activity });
        if (!resumed) throw new AppError('unauthorized', 'Sign in first: there is no session, or it has ended');
        const common = { caller: resumed.caller, via: credential.via, verdict: undefined, startedAt };
        const forged = credential.changesState && !secretsMatch(credential.csrfToken, resumed.session.csrfToken);
        return forged ? { ...common, admitted: false, refusal: csrfRefusal() } : { ...common, admitted: true };
      }
      const { via } = credential;
      const { caller, verdict } = await limits.admit(credential.authorization, via, via === 'mcp' ? options.mcpResource : apiBaseUrl);
      const common = { caller, via, verdict, startedAt };
      const refusal = refusalAtTheDoor(caller, via, verdict);
      return refusal ? { ...common, admitted: false, refusal } : { ...common, admitted: true };
    },

    async call(admission, request) {
      const outcome = admission.admitted ? await run(admission, request) : { kind: 'refused' as const, error: admission.refusal };
      const { caller, via } = admission;
      const status = statusOf(request.operation, outcome);
      const latencyMs = performance.now() - admission.startedAt;
      countCall(via, request.operation, outcome, latencyMs);
      callLog.record({
        orgId: caller.organization.id,
        apiKeyId: caller.actor.kind === 'api_key' ? caller.actor.keyId : null,
        userId: caller.actor.kind === 'person' ? caller.actor.userId : null,
        interface: via,
        operation: request.operation?.name ?? request.tool ?? '(unknown)',
        tool: request.tool ?? null,
        // A tool's result is an MCP answer of its own, not an HTTP one: 200 unless the tool answered an error.
        status: via === 'mcp' && status < 400 ? 200 : status,
        outcome: codeOf(outcome),
        latencyMs,
      });
      return outcome;
    },

    async close() {
      await callLog.drain();
      await limits.close();
    },
  };
}

/** The call in the process's metrics: every call by interface and outcome; a gated write by its answer and time. */
function countCall(via: CallInterface, operation: Operation | undefined, outcome: CallOutcome, latencyMs: number): void {
  calls.inc({ interface: via, outcome: codeOf(outcome) });
  // Refused at the door (the plan's and a key's request limits) or as its write was submitted (a key's cap of an operation's writes).
  if ((outcome.kind === 'refused' || outcome.kind === 'failed') && outcome.error.code === 'rate_limited') {
    limitRefusals.inc({ interface: via, limit: String(outcome.error.details?.limit ?? 'unknown') });
  }
  if (operation?.kind !== 'gated_write') return;
  // An Idempotency-Key's replay answers an earlier write again: that write was counted when it ran.
  if (outcome.kind === 'gated' && outcome.submitted.replayed) return;
  // A write the api could not have answered (Temporal or a worker out of reach past the wait) counts as failed.
  const answer = outcome.kind === 'gated' ? outcome.submitted.answer.outcome : outcome.kind === 'failed' && outcome.error.status >= 500 ? 'failed' : undefined;
  if (!answer) return;
  gatedWritesTotal.inc({ operation: operation.write.name, interface: via, answer });
  gatedWriteSeconds.observe({ answer }, latencyMs / 1000);
}

/** Why a counted request goes no further: over a limit, or not what the interface takes. */
function refusalAtTheDoor(caller: Caller, via: Interface, verdict: RequestVerdict | undefined): AppError | undefined {
  if (verdict && !verdict.admitted) return rateLimitedError(caller, via, verdict);
  if (via !== 'mcp') return undefined;
  // MCP is for agents; the whole exchange (initialize, tools/list) needs API access.
  if (caller.actor.kind !== 'api_key') return new AppError('person_required', 'The MCP server takes API keys; personal tokens are for people using the REST API');
  return apiAccessRefusal(caller);
}

function csrfRefusal(): AppError {
  return new AppError('csrf_failed', 'This request did not come from the console: the X-CSRF-Token header is missing or wrong');
}

/** The operation's input: one object, checked whole against its schema. */
function parse(operation: Operation, input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new AppError('validation_failed', 'The request body must be a JSON object', { fields: [{ field: '(body)', message: 'must be a JSON object' }] });
  }
  return operation.input.parse(input);
}
