import { createMeetingIngest, getMeetingIngest, listMeetingIngests, listMeetingIngestsInput, meetingIngestIdInput, meetingIngestSchema } from '../../domain/resources/meeting-ingests';
import { gatedOperation, getOperation, listOperation } from './define';

export const meetingIngestOperations = [
  listOperation({
    name: 'meeting_ingests.list',
    tool: 'list_meeting_ingests',
    summary: 'List meeting ingests',
    description: 'Posted meeting transcripts with the tasks each created, newest first. Paginated.',
    path: '/meeting-ingests',
    alsoNeeds: ['tasks.read'],
    input: listMeetingIngestsInput,
    item: meetingIngestSchema,
    handler: (input, { db, caller }) => listMeetingIngests(db, caller.organization.id, input),
  }),
  getOperation({
    name: 'meeting_ingests.get',
    tool: 'get_meeting_ingest',
    summary: 'Read a meeting ingest',
    description: 'One meeting transcript with the tasks it created.',
    path: '/meeting-ingests/:id',
    alsoNeeds: ['tasks.read'],
    input: meetingIngestIdInput,
    output: meetingIngestSchema,
    handler: (input, { db, caller }) => getMeetingIngest(db, caller.organization.id, input.id),
  }),
  gatedOperation({
    write: createMeetingIngest,
    tool: 'create_meeting_ingest',
    summary: 'Turn meeting notes into tasks',
    description:
      'Posts a meeting transcript with the tasks extracted from it. One gated write: the ingest and all its tasks are created together, or none; a reviewer sees the whole batch (the policy sees resource.task_count and resource.tasks). Needs tasks.write as well.',
    method: 'POST',
    path: '/meeting-ingests',
    alsoNeeds: ['tasks.write'],
    output: meetingIngestSchema,
  }),
];
