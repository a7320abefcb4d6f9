import { api } from '../../lib/api';

export type CallOutcome = 'ok' | 'applied' | 'held' | 'denied' | 'refused' | 'error';

export interface AgentDay {
  api_key_id: string;
  label: string;
  access: string;
  state: 'active' | 'revoked' | 'expired';
  last_used_at: string | null;
  calls_today: number;
  applied_today: number;
  held_today: number;
  denied_today: number;
  budget_share: number;
  /** Requests counted today against the key's own daily budget (refused ones included); null: it has none. */
  request_budget: { used: number; budget: number } | null;
  /** Each capped operation: writes submitted today (refused ones included) and the cap. */
  write_caps: { operation: string; used: number; cap: number }[];
}

export interface AgentCall {
  id: string;
  api_key_id: string | null;
  api_key_label: string | null;
  interface: 'rest' | 'mcp';
  operation: string;
  outcome: CallOutcome;
  code: string;
  status: number;
  latency_ms: number;
  created_at: string;
}

export interface Memory {
  id: string;
  api_key_id: string;
  content: string;
  tags: string[];
  version: number;
  created_at: string;
  updated_at: string;
}

export interface WaitingTask {
  task_id: string;
  api_key_id: string;
  api_key_label: string;
  tool: string;
  review_id: string;
  reason: string;
  created_at: string;
  expires_at: string;
}

export interface CallFilters {
  api_key_id?: string;
  interface?: 'rest' | 'mcp';
  outcome?: CallOutcome;
}

const query = (filters: object) => {
  const params = new URLSearchParams({ limit: '50' });
  for (const [name, value] of Object.entries(filters)) if (value) params.set(name, String(value));
  return params.toString();
};

export const agentsApi = {
  days: (background = false) => api.get<AgentDay[]>('/v1/agents', { background }),
  calls: (filters: CallFilters, background = false) => api.get<AgentCall[]>(`/v1/agents/calls?${query(filters)}`, { background }),
  memories: (apiKeyId?: string, background = false) => api.get<Memory[]>(`/v1/agents/memories?${query({ api_key_id: apiKeyId })}`, { background }),
  correct: (id: string, content: string, reason: string) => api.patch<Memory>(`/v1/agents/memories/${encodeURIComponent(id)}`, { content, reason }),
  forget: (id: string, reason: string) => api.post<{ id: string }>(`/v1/agents/memories/${encodeURIComponent(id)}/forget`, { reason }),
  waitingTasks: (background = false) => api.get<WaitingTask[]>('/v1/agents/waiting-tasks', { background }),
};
