import type { Caller } from '../../domain/identity/actors';
import { AppError } from '../../domain/kit/errors';
import { includesFeature } from '../../domain/identity/plans';
import type { Operation } from './operation';

/**
 * Whether the caller may use the operation at all, before any input is read or any policy runs. Both
 * transports call this, so a refusal reads the same over REST and MCP.
 */
export function authorize(operation: Operation, caller: Caller): void {
  const switchedOff = apiAccessRefusal(caller);
  if (switchedOff) throw switchedOff;
  if (operation.feature && !includesFeature(caller.plan, operation.feature)) {
    throw new AppError('feature_not_in_plan', `${operation.name} needs the ${operation.feature} feature, which the ${caller.plan.name} plan does not include`, {
      feature: operation.feature,
      plan: caller.plan.name,
    });
  }
  const { actor } = caller;
  if (actor.kind === 'api_key') {
    const rule = operation.access.apiKey;
    if (!rule) {
      throw new AppError(
        'person_required',
        `${operation.name} is for people only: use a personal token of someone with the reviewer role; API keys never can`,
      );
    }
    if (operation.kind === 'gated_write' && actor.access !== 'read_write') {
      throw new AppError('read_only_key', `This key is read-only; ${operation.name} needs a read-write key`);
    }
    for (const ability of [rule.ability, ...(rule.alsoNeeds ?? [])]) {
      if (ability && !actor.abilities.includes(ability)) {
        throw new AppError('insufficient_ability', `This key lacks the ability ${ability}, which ${operation.name} needs`, {
          required: ability,
        });
      }
    }
    return;
  }
  const rule = operation.access.person;
  if (!rule) {
    throw new AppError('insufficient_ability', `${operation.name} is for API keys; personal tokens cannot use it`);
  }
  if (!rule.roles.includes(actor.role)) {
    throw new AppError('insufficient_role', `${operation.name} needs one of the roles ${rule.roles.join(', ')}; you are ${actor.role}`);
  }
}

export function isAllowed(operation: Operation, caller: Caller): boolean {
  try {
    authorize(operation, caller);
    return true;
  } catch {
    return false;
  }
}

/** The organization's "Enable API access" switch: off, no token of it reaches the API. */
export function apiAccessRefusal(caller: Caller): AppError | undefined {
  if (caller.organization.apiAccess) return undefined;
  return new AppError('api_access_disabled', `API access is turned off for the organization ${caller.organization.slug}`);
}
