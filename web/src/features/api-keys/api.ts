import { api } from '../../lib/api';
import type { Body, Data, Item } from '../../lib/api-types';

export type KeyBudget = Body<'api_keys_update_budget'>;
export type AbilityInfo = Item<'api_keys_abilities'>;
export type NewKey = Body<'api_keys_create'>;

export type ApiKey = Item<'api_keys_list'>;

/** An app connected through OAuth (an MCP client); null for a key made here or by the command line. */
export type Connection = NonNullable<ApiKey['connection']>;

/** A key an app holds through its OAuth connection: `created_by` connected it, `label` is the app's name. */
export type ConnectedApp = ApiKey & { connection: Connection };

export const isConnectedApp = (key: ApiKey): key is ConnectedApp => Boolean(key.connection);

const keyPath = (id: string) => `/v1/api-keys/${encodeURIComponent(id)}`;

export const keysApi = {
  list: () => api.get<Data<'api_keys_list'>>('/v1/api-keys'),
  abilities: () => api.get<Data<'api_keys_abilities'>>('/v1/api-keys/abilities'),
  create: (key: NewKey) => api.post<Data<'api_keys_create'>>('/v1/api-keys', key),
  revoke: (id: string) => api.post<Data<'api_keys_revoke'>>(`${keyPath(id)}/revoke`),
  setBudget: (id: string, budget: KeyBudget) => api.patch<Data<'api_keys_update_budget'>>(`${keyPath(id)}/budget`, budget),
  organization: () => api.get<Data<'organization_get'>>('/v1/organization'),
  setApiAccess: (on: boolean) => api.patch<Data<'organization_update'>>('/v1/organization', { api_access: on } satisfies Body<'organization_update'>),
};
