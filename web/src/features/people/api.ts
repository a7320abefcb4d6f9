import { api } from '../../lib/api';
import type { Role } from '../../lib/session';

export interface Person {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  active: boolean;
  has_password: boolean;
  /** The team member they are (mem_…): inactive or out of office, they are not asked to review. */
  team_member_id: string | null;
  created_at: string;
  last_sign_in_at?: string | null;
  open_sessions?: number;
}

export interface PasswordLink {
  url: string;
  expires_at: string;
}

export const peopleApi = {
  list: () => api.get<Person[]>('/v1/people'),
  invite: (person: { email: string; name?: string; role: Role }) => api.post<{ person: Person; set_password_link: PasswordLink }>('/v1/people', person),
  update: (id: string, change: { role?: Role; active?: boolean; team_member_id?: string | null }) => api.patch<Person>(`/v1/people/${encodeURIComponent(id)}`, change),
  resetPassword: (id: string) => api.post<{ person: Person; set_password_link: PasswordLink }>(`/v1/people/${encodeURIComponent(id)}/reset-password`),
  endSessions: (id: string) => api.post<{ sessions_ended: number }>(`/v1/people/${encodeURIComponent(id)}/end-sessions`),
};
