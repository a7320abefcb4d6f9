import { api } from '../../lib/api';

export interface ApiKey {
  id: string;
  label: string;
  access: 'read' | 'read_write';
  abilities: string[];
  created_at: string;
  created_by: { id: string; email: string } | null;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  state: 'active' | 'expired' | 'revoked';
  /** The key's own requests a day; null: the organization's budget alone. */
  daily_request_budget: number | null;
  /** Daily caps of writes submitted, by gated-write operation. */
  write_caps: Record<string, number>;
}

export interface KeyBudget {
  daily_request_budget: number | null;
  write_caps: Record<string, number>;
}

export interface AbilityInfo {
  ability: string;
  family: string;
  description: string;
  write: boolean;
  /** The gated writes the ability allows: what a write cap may name. */
  operations: string[];
}

export interface Organization {
  slug: string;
  name: string;
  api_access: boolean;
}

export interface NewKey {
  label: string;
  access: 'read' | 'read_write';
  abilities: string[];
  expires_at: string | null;
}

export const keysApi = {
  list: () => api.get<ApiKey[]>('/v1/api-keys'),
  abilities: () => api.get<AbilityInfo[]>('/v1/api-keys/abilities'),
  create: (key: NewKey) => api.post<{ key: ApiKey; token: string }>('/v1/api-keys', key),
  revoke: (id: string) => api.post<ApiKey>(`/v1/api-keys/${encodeURIComponent(id)}/revoke`),
  setBudget: (id: string, budget: KeyBudget) => api.patch<ApiKey>(`/v1/api-keys/${encodeURIComponent(id)}/budget`, budget),
  organization: () => api.get<Organization>('/v1/organization'),
  setApiAccess: (on: boolean) => api.patch<Organization>('/v1/organization', { api_access: on }),
};
