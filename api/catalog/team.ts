import { listTeam, listTeamInput, teamMemberSchema } from '../../domain/resources/team';
import { roles } from '../../domain/identity/actors';
import { listOperation } from './define';

// The roster arrives by import; the API only reads it.

export const teamOperations = [
  listOperation({
    name: 'team.list',
    tool: 'list_team_members',
    summary: 'The team roster',
    description: 'The active team members (include_inactive=true for all): whom tasks, projects and events can be assigned to.',
    path: '/team-members',
    input: listTeamInput,
    item: teamMemberSchema,
    handler: (input, { db, caller }) => listTeam(db, caller.organization.id, input),
    // People read it too: the console links a person to their team member from it.
    access: { apiKey: { ability: 'team.read' }, person: { roles } },
  }),
];
