import type { AgentDay } from './api';

/** The keys to filter by, as options of a select. */
export function KeyOptions({ days }: { days: AgentDay[] | undefined }) {
  return (days ?? []).map((day) => (
    <option key={day.api_key_id} value={day.api_key_id}>
      {day.label}
    </option>
  ));
}
