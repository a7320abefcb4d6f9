import type { ApiKey } from './api';

const stateNames = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const;

/** Whether a key (or a connected app's key) still works, for its row. */
export function KeyState({ apiKey }: { apiKey: ApiKey }) {
  return <span className={`state ${apiKey.state === 'active' ? 'on' : 'off'}`}>{stateNames[apiKey.state]}</span>;
}
