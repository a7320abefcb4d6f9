import { z } from 'zod';
import type { Queryable } from '../db/database';
import { decodeCursor, pageInput, toPage, type Page } from './pagination';
import { Filters } from './query';
import { plainRecord } from './records';

export const teamMemberSchema = z
  .object({
    id: z.string().describe('The team member id; use it as assignee_id, owner_id or an attendee'),
    name: z.string(),
    email: z.string().nullable(),
    title: z.string().nullable().describe('Job title or role, e.g. "Account manager"'),
    active: z.boolean(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
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

export async function listTeam(db: Queryable, orgId: string, input: z.infer<typeof listTeamInput>): Promise<Page<TeamMember>> {
  const filters = new Filters(orgId).add('active = $?', input.include_inactive === 'true' ? undefined : true).add('id < $?', decodeCursor(input.cursor));
  const { rows } = await db.query(`SELECT * FROM team_members ${filters.where} ORDER BY id DESC LIMIT ${filters.param(input.limit + 1)}`, filters.values);
  return toPage(rows.map((row) => plainRecord(row) as TeamMember), input.limit);
}
