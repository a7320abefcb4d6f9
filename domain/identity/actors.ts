import type { Ability, Access } from './abilities';
import type { Organization } from './organizations';
import type { Plan } from './plans';

export type Role = 'owner' | 'admin' | 'reviewer' | 'member';
export const roles: readonly Role[] = ['owner', 'admin', 'reviewer', 'member'];

/** Roles that may decide reviews. */
export const reviewerRoles: readonly Role[] = ['owner', 'admin', 'reviewer'];

export interface ApiKeyActor {
  kind: 'api_key';
  keyId: string;
  label: string;
  access: Access;
  abilities: Ability[];
}

export interface PersonActor {
  kind: 'person';
  userId: string;
  tokenId: string;
  email: string;
  role: Role;
}

export type Actor = ApiKeyActor | PersonActor;

/** What every authenticated request knows: whose organization, and who is asking. */
export interface Caller {
  organization: Organization;
  /** The organization's plan as it is now, read in the same query as the token. */
  plan: Plan;
  actor: Actor;
}
