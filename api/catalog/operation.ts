import type { ErrorCode } from '../../domain/kit/errors';
import type { z } from 'zod';
import type { Database } from '../../db/database';
import type { Ability } from '../../domain/identity/abilities';
import type { Caller, Role } from '../../domain/identity/actors';
import type { CallInterface } from '../../domain/usage/call-log';
import type { GatedWrite } from '../../domain/gate/writes';
import type { DailyUsage, RequestLimits } from '../../domain/usage/limits';
import type { Page } from '../../domain/kit/pagination';
import type { Feature } from '../../domain/identity/plans';
import type { GateClient } from './gate-client';
import type { OutboundRules } from '../../domain/notify/outbound';
import type { Mailer } from '../../domain/notify/mailer';
import type { SecretBox } from '../../domain/kit/secret-box';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What a handler gets besides its input; it never sees the transport. */
export interface OperationContext {
  db: Database;
  gate: GateClient;
  caller: Caller;
  interface: CallInterface;
  /** Absolute URL of the REST base (`…/api`), for links in answers. */
  apiBaseUrl: string;
  /** Where people reach the console, for links to its pages (a set-password link, say). */
  publicUrl: string;
  /** Where webhook endpoints may point (outgoing requests: public addresses only, unless the operator allows more). */
  outbound: OutboundRules;
  /** Email to people (SMTP_URL): set-password links go to their person alone this way; absent, none is sent. */
  mailer?: Mailer;
  /** Told of what failed on our side that the answer tells in fewer words (an email not sent). */
  log?: (error: unknown, message: string) => void;
  /** Seals and opens the secrets kept in the database (webhook and Slack signing secrets, the Slack webhook URL). */
  secrets: SecretBox;
  /** The whole catalog, for answers that describe the API (discovery). */
  catalog: readonly Operation[];
  /** The plan's request limits, for answers that tell the usage (discovery); the call pipeline does the counting. */
  limits: RequestLimits;
  /** The organization's day as this request's counting left it; absent when limits are off. */
  usage?: DailyUsage;
}

/**
 * Who may call an operation. API keys need `ability` (null: any valid key); people need one of `roles`.
 * Leaving a principal out shuts it out.
 */
export interface OperationAccess {
  /** `alsoNeeds`: further abilities, for operations that reach another family (an ingest creates tasks). */
  apiKey?: { ability: Ability | null; alsoNeeds?: Ability[] };
  person?: { roles: readonly Role[] };
}

interface OperationBase<Input extends z.ZodObject> {
  /** `<family>.<verb>`: the operation's name everywhere (routes, policies, audit). */
  name: string;
  /** The MCP tool's name, written for a model (`list_tasks`); people-only operations have none. */
  tool?: string;
  family: string;
  summary: string;
  description: string;
  method: HttpMethod;
  /** Relative to `/v1`; `:param` segments are fields of the input. */
  path: string;
  input: Input;
  output: z.ZodType;
  access: OperationAccess;
  /** A plan feature the operation needs (expenses, work_logs); without it: 403 feature_not_in_plan. */
  feature?: Feature;
  /**
   * Where it is offered. By default: REST, MCP when it has a tool, and the console when people may call it.
   * The organization's own settings (keys, people) are the console's alone.
   */
  interfaces?: readonly CallInterface[];
}

/** Reads change nothing; lists answer a page. */
export interface ReadOperation<Input extends z.ZodObject = z.ZodObject> extends OperationBase<Input> {
  kind: 'read';
  list: boolean;
  /**
   * A read whose input is a secret (a one-time link's token): a POST, so that the secret travels in the body, never
   * in a URL that proxies log and traces record. Other reads are GETs.
   */
  secretInBody?: true;
  handler(input: z.infer<Input>, context: OperationContext): Promise<unknown | Page<unknown>>;
}

/** Writes subject to policy: they run as the gated-write workflow, never in the api. */
export interface GatedWriteOperation<Input extends z.ZodObject = z.ZodObject> extends OperationBase<Input> {
  kind: 'gated_write';
  /** The write the workflow decides and applies, declared with its family in domain/resources; name and input are its own. */
  write: GatedWrite<Input>;
  successStatus: 200 | 201;
  destructive: boolean;
  /**
   * A changeset (api/catalog/changesets.ts): several gated writes as one, run by the changeset workflow; `write` then
   * only names it and parses its input.
   */
  changeset?: true;
}

/** A person's decision (approve, deny): not gated, never open to API keys. */
export interface PersonActionOperation<Input extends z.ZodObject = z.ZodObject> extends OperationBase<Input> {
  kind: 'person_action';
  /** Refusals of its own, beyond those every person's action can give (self_approval, policy_denied). */
  refusals?: readonly ErrorCode[];
  handler(input: z.infer<Input>, context: OperationContext): Promise<unknown>;
}

export type Operation = ReadOperation | GatedWriteOperation | PersonActionOperation;

export function defineOperation<Input extends z.ZodObject>(operation: ReadOperation<Input>): ReadOperation<Input>;
export function defineOperation<Input extends z.ZodObject>(operation: GatedWriteOperation<Input>): GatedWriteOperation<Input>;
export function defineOperation<Input extends z.ZodObject>(operation: PersonActionOperation<Input>): PersonActionOperation<Input>;
export function defineOperation(operation: Operation): Operation {
  return operation;
}

/** Whether an interface offers the operation; to an interface that does not, it does not exist. */
export function isOfferedOn(operation: Operation, via: CallInterface): boolean {
  if (operation.interfaces) return operation.interfaces.includes(via);
  if (via === 'mcp') return operation.tool !== undefined;
  if (via === 'console') return operation.access.person !== undefined;
  return true;
}

export function pathParameters(path: string): string[] {
  return [...path.matchAll(/:([a-z_]+)/g)].map((match) => match[1]!);
}

/** The path as people and OpenAPI write it: `/v1/tasks/{id}`. */
export function templatedPath(path: string): string {
  return `/v1${path.replace(/:([a-z_]+)/g, '{$1}')}`;
}
