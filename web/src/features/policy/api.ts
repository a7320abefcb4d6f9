import { api, queryString } from '../../lib/api';
import type { Body, Data, Query } from '../../lib/api-types';

/** A saved version of the organization's Cedar policy set. */
export type PolicyVersion = Data<'policy_get'>;
export type Simulation = Data<'policy_simulate'>;
/** A recorded decision that a draft decides otherwise. */
export type ChangedDecision = Simulation['changes'][number];
export type DecisionKind = ChangedDecision['was'];
/** How many decisions change, by `was→would_be` (`allow→review`). */
export type ChangeCounts = Simulation['changed'];
export type Shadow = NonNullable<Data<'policy_shadow'>['shadow']>;
export type SuggestedRule = Data<'policy_suggestions'>['suggestions'][number];
/** The organization's switches this page shows (the rest of its settings live elsewhere). */
export type OrganizationSettings = Pick<Data<'organization_get'>, 'self_approval' | 'share_policy_text' | 'approvals_need_passkey' | 'approve_links'>;

/** How often each rule decided over a period. */
export type RuleCounts = Data<'policy_rule_counts'>;
export type RuleCountRange = NonNullable<Query<'policy_rule_counts'>['range']>;

/** A window in which a key's writes like an approved one skip review (opened as a person approved). */
export type TrustWindow = Data<'trust_windows_list'>['windows'][number];

export const policyApi = {
  current: () => api.get<Data<'policy_get'>>('/v1/policy'),
  versions: () => api.get<Data<'policy_versions'>>('/v1/policy/versions').then((answer) => answer.versions),
  /** Checks the draft with Cedar and saves it as the version in force (422 with Cedar's message when it does not parse). */
  save: (source: string, comment?: string) => api.patch<Data<'policy_update'>>('/v1/policy', { source, comment } satisfies Body<'policy_update'>),
  /** A dry run: the recorded decisions of the window replayed under the draft. Changes nothing. */
  simulate: (source: string, since: string) => api.post<Simulation>('/v1/policy/simulate', { source, since } satisfies Body<'policy_simulate'>),
  shadow: () => api.get<Data<'policy_shadow'>>('/v1/policy/shadow').then((answer) => answer.shadow),
  startShadow: (source: string) =>
    api.post<Data<'policy_start_shadow'>>('/v1/policy/shadow', { source } satisfies Body<'policy_start_shadow'>).then((answer) => answer.shadow),
  stopShadow: () => api.delete<Data<'policy_stop_shadow'>>('/v1/policy/shadow'),
  ruleCounts: (range: RuleCountRange, background = false) => api.get<RuleCounts>(`/v1/policy/rule-counts?${queryString({ range })}`, { background }),
  suggestions: () => api.get<Data<'policy_suggestions'>>('/v1/policy/suggestions').then((answer) => answer.suggestions),
  organization: () => api.get<Data<'organization_get'>>('/v1/organization'),
  /** How many passkeys the signed-in person has (the console's door lists them). */
  ownPasskeys: () => api.get<unknown[]>('/passkeys').then((passkeys) => passkeys.length),
  trustWindows: (background = false) => api.get<Data<'trust_windows_list'>>('/v1/trust-windows', { background }).then((answer) => answer.windows),
  /** Ends a trust window at once: the key's next such write is held for review again. */
  closeTrustWindow: (id: string) => api.post<Data<'trust_windows_close'>>(`/v1/trust-windows/${encodeURIComponent(id)}/close`, {}),
  updateOrganization: (change: Partial<OrganizationSettings & Pick<Data<'organization_get'>, 'undo_window_days'>>) => api.patch<Data<'organization_update'>>('/v1/organization', change satisfies Body<'organization_update'>),
};

/** A rule's @id, when its text names one. */
export function ruleId(rule: string): string | undefined {
  return /@id\("((?:[^"\\]|\\.)*)"\)/.exec(rule)?.[1];
}
