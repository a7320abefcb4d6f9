import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createdAt, recordId, updatedAt } from '../kit/fields';
import { pageInput, type Page } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';

export const teamMemberSchema = z
  .object({
    id: recordId(
      'team member',
      'mem',
      'use it as assignee_id (tasks), owner_id (projects), in attendee_ids (events), or as the member_id, attendee_id or assignee_id filter',
    ),
    name: z.string().describe('Full name'),
    email: z.string().nullable().describe('Work email address, or null when unknown'),
    title: z.string().nullable().describe('Job title or role, e.g. "Account manager", or null'),
    active: z.boolean().describe('True for the current roster; false for people who left (listed only with include_inactive=true)'),
    created_at: createdAt,
    updated_at: updatedAt,
  })
  .describe('A member of the organization’s team');
export type TeamMember = z.infer<typeof teamMemberSchema>;

export const listTeamInput = z.strictObject({
  include_inactive: z
    .enum(['true', 'false'])
    .optional()
    .describe('true to include people who left; by default only the active roster'),
  ...pageInput,
});

export function listTeam(db: Queryable, orgId: string, input: z.infer<typeof listTeamInput>): Promise<Page<TeamMember>> {
  return listPage(db, 'team_members', new Filters(orgId).add('active = $?', input.include_inactive === 'true' ? undefined : true), input);
}
