import type { Ability, Access } from './abilities';
import type { Organization } from './organizations';
import type { Plan } from './plans';

export type Role = 'owner' | 'admin' | 'reviewer' | 'member';
export const roles: readonly Role[] = ['owner', 'admin', 'reviewer', 'member'];

/**
 * Who may do what, by role (the README's matrix). Members see the queue and the organization; they decide
 * nothing and change nothing.
 */
export const rolesThat = {
  decideReviews: ['owner', 'admin', 'reviewer'],
  manageKeys: ['owner', 'admin'],
  managePeople: ['owner', 'admin'],
  editPolicy: ['owner', 'admin'],
  seeMemories: ['owner', 'admin'],
  readAudit: ['owner', 'admin', 'reviewer'],
  manageWebhooks: ['owner', 'admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof rolesThat;

/** Roles that may decide reviews. */
export const reviewerRoles: readonly Role[] = rolesThat.decideReviews;

export function permissionsOf(role: Role): Permission[] {
  return (Object.keys(rolesThat) as Permission[]).filter((permission) => (rolesThat[permission] as readonly Role[]).includes(role));
}

export interface ApiKeyActor {
  kind: 'api_key';
  keyId: string;
  label: string;
  access: Access;
  abilities: Ability[];
  /** The key's own daily request budget (within the organization's); null: the organization's alone. */
  dailyRequestBudget: number | null;
  /** The key's daily caps of writes submitted, by gated-write operation (`customers.update`). */
  writeCaps: Readonly<Record<string, number>>;
  /**
   * Set when the key is a client a person connected over OAuth, and this request came with one of its access
   * tokens: its abilities are the token's scopes, and a call outside them is answered with a scope challenge.
   */
  oauthClientId?: string;
}

export interface PersonActor {
  kind: 'person';
  userId: string;
  /** How the person came: a personal token (their scripts, over REST) or a console session (the browser). */
  credential: { type: 'personal_token' | 'session'; id: string };
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
