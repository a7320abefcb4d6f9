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

/** A member of the team roster (the organization's staff, as imported). */
export interface TeamMember {
  id: string;
  name: string;
  title: string | null;
  active: boolean;
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
  /** The whole roster, inactive members too (an organization's team is tens, not thousands: the first 200). */
  teamMembers: async () => (await api.page<TeamMember>('/v1/team-members?include_inactive=true&limit=200')).items,
  endSessions: (id: string) => api.post<{ sessions_ended: number }>(`/v1/people/${encodeURIComponent(id)}/end-sessions`),
};
