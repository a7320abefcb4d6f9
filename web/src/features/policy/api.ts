import { api } from '../../lib/api';

export type DecisionKind = 'allow' | 'review' | 'deny';

/** A saved version of the organization's Cedar policy set. */
export interface PolicyVersion {
  version: number;
  source: string;
  /** A person's email, cli:<file>, or default. */
  created_by: string;
  created_at: string;
}

/** A recorded decision that a draft decides otherwise. */
export interface ChangedDecision {
  decision_id: string;
  at: string;
  operation: string;
  api_key_id: string;
  api_key_label: string;
  was: DecisionKind;
  would_be: DecisionKind;
  /** The draft's reason. */
  reason: string;
  /** The draft's rules that decided. */
  policy_ids: string[];
}

/** How many decisions change, by `was→would_be` (`allow→review`). */
export type ChangeCounts = Record<string, number>;

export interface Simulation {
  evaluated: number;
  changed: ChangeCounts;
  changes: ChangedDecision[];
  /** More decisions were recorded in the window than one dry run replays (the newest were). */
  truncated: boolean;
}

/** The windows a dry run may replay, as the API reads them. */
export type SimulationWindow = '24h' | '7d' | '30d';

export interface Shadow {
  source: string;
  started_at: string;
  /** A person's id (usr_…); null when started from the command line. */
  started_by: string | null;
  decided: number;
  disagreed: ChangeCounts;
  disagreements: ChangedDecision[];
}

export interface SuggestedRule {
  /** The proposed Cedar rule, to add to a draft. */
  rule: string;
  operation: string;
  changed_fields: string[] | null;
  api_key_id: string | null;
  held_by: string[];
  evidence: { approved: number; denied: number; first_at: string; last_at: string; review_ids: string[] };
}

/** The organization's switches this page shows (the rest of its settings live elsewhere). */
export interface OrganizationSettings {
  self_approval: boolean;
  share_policy_text: boolean;
}

export const policyApi = {
  current: () => api.get<PolicyVersion>('/v1/policy'),
  versions: () => api.get<{ versions: PolicyVersion[] }>('/v1/policy/versions').then((answer) => answer.versions),
  /** Checks the draft with Cedar and saves it as the version in force (422 with Cedar's message when it does not parse). */
  save: (source: string, comment?: string) => api.patch<PolicyVersion>('/v1/policy', { source, comment }),
  /** A dry run: the recorded decisions of the window replayed under the draft. Changes nothing. */
  simulate: (source: string, since: SimulationWindow) => api.post<Simulation>('/v1/policy/simulate', { source, since }),
  shadow: () => api.get<{ shadow: Shadow | null }>('/v1/policy/shadow').then((answer) => answer.shadow),
  startShadow: (source: string) => api.post<{ shadow: Shadow | null }>('/v1/policy/shadow', { source }).then((answer) => answer.shadow),
  stopShadow: () => api.delete<{ shadow: null }>('/v1/policy/shadow'),
  suggestions: () => api.get<{ suggestions: SuggestedRule[] }>('/v1/policy/suggestions').then((answer) => answer.suggestions),
  organization: () => api.get<OrganizationSettings>('/v1/organization'),
  updateOrganization: (change: Partial<OrganizationSettings>) => api.patch<OrganizationSettings>('/v1/organization', change),
};

/** A rule's @id, when its text names one. */
export function ruleId(rule: string): string | undefined {
  return /@id\("((?:[^"\\]|\\.)*)"\)/.exec(rule)?.[1];
}
