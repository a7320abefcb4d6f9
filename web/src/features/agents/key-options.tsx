import type { AgentDay } from './api';

/** The keys to filter by, as options of a select (a connected app's own name marked, as everywhere). */
export function KeyOptions({ days }: { days: AgentDay[] | undefined }) {
  return (days ?? []).map((day) => (
    <option key={day.api_key_id} value={day.api_key_id}>
      {day.label}
      {day.oauth_client_id === null ? '' : ' (unverified app name)'}
    </option>
  ));
}
