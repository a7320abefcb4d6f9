import type { Ability } from '../../domain/identity/abilities';
import type { Caller } from '../../domain/identity/actors';
import { includesFeature } from '../../domain/identity/plans';
import { AppError, type ErrorCode } from '../../domain/kit/errors';
import type { Operation } from './operation';

/** Why a caller may not use an operation: what an AppError is made of, without the cost of making one. */
interface Denial {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Whether the caller may use the operation at all, before any input is read or any policy runs. Every
 * interface calls this, so a refusal reads the same over REST and MCP.
 */
export function authorize(operation: Operation, caller: Caller): void {
  const denial = denialOf(operation, caller);
  if (denial) throw new AppError(denial.code, denial.message, denial.details);
}

/** For listings (discovery, MCP tools): the same rule as authorize, asked of every operation. */
export function isAllowed(operation: Operation, caller: Caller): boolean {
  return denialOf(operation, caller) === undefined;
}

/**
 * The scopes a connected client's call needs and its token was not granted (the scope challenge), or undefined
 * when the call is refused for another reason, or not at all.
 */
export function scopeShortfall(operation: Operation, caller: Caller): string[] | undefined {
  const denial = denialOf(operation, caller);
  return denial?.code === 'insufficient_scope' ? (denial.details!.scopes as string[]) : undefined;
}

/**
 * The scopes a scope challenge (WWW-Authenticate) names for an `insufficient_scope` refusal: those the token holds
 * and those the call needs, so that a client which asks for exactly these keeps what it had (MCP 2025-11-25).
 */
export function scopesToAskFor(refusal: AppError): string[] {
  const details = refusal.details ?? {};
  return [...new Set([...((details.granted as string[] | undefined) ?? []), ...((details.scopes as string[] | undefined) ?? [])])];
}

/** The organization's "Enable API access" switch: off, no token of it reaches the API; the console stays open. */
export function apiAccessRefusal(caller: Caller): AppError | undefined {
  const denial = apiAccessDenial(caller);
  return denial && new AppError(denial.code, denial.message);
}

function apiAccessDenial(caller: Caller): Denial | undefined {
  if (caller.organization.apiAccess) return undefined;
  // The switch is for tokens; people in the console keep working (and may switch it on again).
  if (caller.actor.kind === 'person' && caller.actor.credential.type === 'session') return undefined;
  return { code: 'api_access_disabled', message: `API access is turned off for the organization ${caller.organization.slug}` };
}

function denialOf(operation: Operation, caller: Caller): Denial | undefined {
  const switchedOff = apiAccessDenial(caller);
  if (switchedOff) return switchedOff;
  if (operation.feature && !includesFeature(caller.plan, operation.feature)) {
    return {
      code: 'feature_not_in_plan',
      message: `${operation.name} needs the ${operation.feature} feature, which the ${caller.plan.name} plan does not include`,
      details: { feature: operation.feature, plan: caller.plan.name },
    };
  }
  const { actor } = caller;
  if (actor.kind === 'api_key') {
    const rule = operation.access.apiKey;
    if (!rule) {
      return {
        code: 'person_required',
        message: `${operation.name} is for people only: use a personal token of someone with the reviewer role; API keys never can`,
      };
    }
    const needed = [rule.ability, ...(rule.alsoNeeds ?? [])].filter((ability): ability is Ability => Boolean(ability));
    const readOnly = operation.kind === 'gated_write' && actor.access !== 'read_write';
    const missing = needed.find((ability) => !actor.abilities.includes(ability));
    // A connected client's token: a scope challenge naming every scope the call needs, which the client may ask for.
    if (actor.oauthClientId !== undefined && (readOnly || missing)) {
      const scopes = needed;
      return {
        code: 'insufficient_scope',
        message: `This connection was not granted ${missing ?? 'write access'}, which ${operation.name} needs; it needs the scopes ${scopes.join(' ')}, which an owner or admin may grant when the client asks again`,
        details: { required: missing ?? needed[0], scopes, granted: [...actor.abilities] },
      };
    }
    if (readOnly) return { code: 'read_only_key', message: `This key is read-only; ${operation.name} needs a read-write key` };
    if (missing) return { code: 'insufficient_ability', message: `This key lacks the ability ${missing}, which ${operation.name} needs`, details: { required: missing } };
    // A gated write whose ability depends on the record it names (an undo: its family's write ability, checked by the
    // gate) is for keys that may write something at all.
    if (operation.kind === 'gated_write' && rule.ability === null && !actor.abilities.some((ability) => ability.endsWith('.write'))) {
      return { code: 'insufficient_ability', message: `This key has no write ability, and ${operation.name} needs the write ability of the record's family` };
    }
    return undefined;
  }
  const rule = operation.access.person;
  if (!rule) return { code: 'insufficient_ability', message: `${operation.name} is for API keys; people cannot use it` };
  if (!rule.roles.includes(actor.role)) {
    return { code: 'insufficient_role', message: `${operation.name} needs one of the roles ${rule.roles.join(', ')}; you are ${actor.role}` };
  }
  return undefined;
}
