import { api } from './api';
import type { Data, Item } from './api-types';

// Who acts in the organization, for every page that lists them (the Agent Command Center and People show them,
// the Audit page filters by them): its API keys with their day, and its people.

export type AgentDay = Item<'agents_list'>;
export type Person = Item<'people_list'>;

export const directory = {
  /** Every key of the organization with what it did today. */
  agentDays: (background = false) => api.get<Data<'agents_list'>>('/v1/agents', { background }),
  /** Owners and admins only. */
  people: () => api.get<Data<'people_list'>>('/v1/people'),
};
