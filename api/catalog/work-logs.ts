import { getWorkLog, listWorkLogs, listWorkLogsInput, workLogIdInput, workLogSchema } from '../../domain/resources/work-logs';
import { getOperation, listOperation } from './define';

// Read-only, and only on plans with the work_logs feature; work logs arrive by import.

export const workLogOperations = [
  listOperation({
    name: 'work_logs.list',
    tool: 'list_work_logs',
    summary: 'List work logs',
    description: 'Time logged by team members against tasks or projects, newest first; filter by member, task, project and dates. Only on plans with the work_logs feature.',
    path: '/work-logs',
    feature: 'work_logs',
    input: listWorkLogsInput,
    item: workLogSchema,
    handler: (input, { db, caller }) => listWorkLogs(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'work_logs.get',
    tool: 'get_work_log',
    summary: 'Read a work log',
    description: 'One work log entry. Only on plans with the work_logs feature.',
    path: '/work-logs/:id',
    feature: 'work_logs',
    input: workLogIdInput,
    output: workLogSchema,
    handler: (input, { db, caller }) => getWorkLog(db, caller.organization.id, input.id),
  }),
];
