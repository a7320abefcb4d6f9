import { api } from '../../lib/api';
import type { Body, Data, Item } from '../../lib/api-types';
import { directory } from '../../lib/directory';

export type { Person } from '../../lib/directory';
/** A member of the team roster (the organization's staff, as imported). */
export type TeamMember = Item<'team_list'>;
/**
 * What an invite or a reset answers of the person's new set-password link: the link itself when no email is
 * configured (to give them), or whether it was emailed to them (the link is then never shown here).
 */
export type LinkHandOver = Pick<Data<'people_invite'>, 'set_password_link' | 'set_password_email'>;

const personPath = (id: string) => `/v1/people/${encodeURIComponent(id)}`;

export const peopleApi = {
  list: directory.people,
  invite: (person: Body<'people_invite'>) => api.post<Data<'people_invite'>>('/v1/people', person),
  update: (id: string, change: Body<'people_update'>) => api.patch<Data<'people_update'>>(personPath(id), change),
  resetPassword: (id: string) => api.post<Data<'people_reset_password'>>(`${personPath(id)}/reset-password`),
  /** The whole roster, inactive members too (an organization's team is tens, not thousands: the first 200). */
  teamMembers: async () => (await api.page<TeamMember>('/v1/team-members?include_inactive=true&limit=200')).items,
  endSessions: (id: string) => api.post<Data<'people_end_sessions'>>(`${personPath(id)}/end-sessions`),
};
