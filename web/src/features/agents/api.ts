import { api, queryString } from '../../lib/api';
import type { Body, Data, Item, Query } from '../../lib/api-types';
import { directory } from '../../lib/directory';

export type { AgentDay } from '../../lib/directory';
export type AgentCall = Item<'agents_calls'>;
export type CallOutcome = AgentCall['outcome'];
export type Memory = Item<'agents_memories'>;
export type WaitingTask = Item<'agents_waiting_tasks'>;
export type CallFilters = Omit<Query<'agents_calls'>, 'limit' | 'cursor'>;
export type Activity = Data<'agents_activity'>;
export type ActivityRange = Activity['range'];

const memoryPath = (id: string) => `/v1/agents/memories/${encodeURIComponent(id)}`;

export const agentsApi = {
  days: directory.agentDays,
  calls: (filters: CallFilters, background = false) => api.get<Data<'agents_calls'>>(`/v1/agents/calls?${queryString({ limit: 50, ...filters })}`, { background }),
  /** The agents' calls by the hour or the day, by how they ended (one key's, or every key's). */
  activity: (range: ActivityRange, apiKeyId?: string, background = false) =>
    api.get<Activity>(`/v1/agents/activity?${queryString({ range, api_key_id: apiKeyId })}`, { background }),
  memories: (apiKeyId?: string, background = false) =>
    api.get<Data<'agents_memories'>>(`/v1/agents/memories?${queryString({ limit: 50, api_key_id: apiKeyId })}`, { background }),
  correct: (id: string, change: Body<'agents_correct_memory'>) => api.patch<Data<'agents_correct_memory'>>(memoryPath(id), change),
  forget: (id: string, why: Body<'agents_forget_memory'>) => api.post<Data<'agents_forget_memory'>>(`${memoryPath(id)}/forget`, why),
  waitingTasks: (background = false) => api.get<Data<'agents_waiting_tasks'>>('/v1/agents/waiting-tasks', { background }),
};
