import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { createWrite } from '../gate/writes';
import { createdAt, instantField, recordId, text, utcInstant } from '../kit/fields';
import { newId } from '../kit/ids';
import { pageInput, type Page } from '../kit/pagination';
import { Filters, listPage } from '../kit/query';
import { loadRecord, plainRecord } from '../kit/rows';
import { createTaskInput, insertTask, taskRefs, taskSchema, type Task } from './tasks';

export const meetingIngestSchema = z
  .object({
    id: recordId('meeting ingest', 'mtg', 'matches the meeting_ingest_id of the tasks it created; use it as {id} in /v1/meeting-ingests/{id}'),
    title: z.string().describe('What the meeting was'),
    occurred_at: instantField('When the meeting took place'),
    participants: z.array(z.string()).describe('Who took part, as named in the transcript (names, not team member ids)'),
    source: z.string().nullable().describe('Where the transcript came from, e.g. zoom, teams, notes; null when not given'),
    transcript: z.string().describe('The transcript or notes, as submitted'),
    tasks: z.array(taskSchema).describe('The tasks created from the meeting'),
    created_at: createdAt,
  })
  .describe('A meeting transcript and the tasks extracted from it');
export type MeetingIngest = z.infer<typeof meetingIngestSchema>;

export const createMeetingIngestInput = z.strictObject({
  title: text({ max: 300 }).trim().min(1).describe('What the meeting was, e.g. "Weekly sales sync"'),
  occurred_at: utcInstant.describe('When the meeting took place, RFC 3339'),
  participants: z.array(text({ max: 200 }).trim().min(1)).max(100).default([]).describe('Who took part'),
  source: text({ max: 100 }).optional().describe('Where the transcript came from, e.g. zoom, teams, notes'),
  transcript: text({ min: 1, max: 500_000 }).describe('The transcript or notes, as text'),
  tasks: z
    .array(createTaskInput)
    .min(1)
    .max(100)
    .describe('The tasks extracted from the meeting (1 to 100), each as for creating a task; all are created together or none'),
});
export type CreateMeetingIngestInput = z.infer<typeof createMeetingIngestInput>;

export const listMeetingIngestsInput = z.strictObject({ ...pageInput });
export const meetingIngestIdInput = z.strictObject({ id: text({ max: 100 }).describe('The meeting ingest id, e.g. mtg_01j…') });

export async function listMeetingIngests(db: Queryable, orgId: string, input: z.infer<typeof listMeetingIngestsInput>): Promise<Page<MeetingIngest>> {
  const page = await listPage<Omit<MeetingIngest, 'tasks'>>(db, 'meeting_ingests', new Filters(orgId), input);
  const tasks = await tasksOf(db, orgId, page.items.map((item) => item.id));
  return { ...page, items: page.items.map((item) => ({ ...item, tasks: tasks.get(item.id) ?? [] })) };
}

export async function getMeetingIngest(db: Queryable, orgId: string, id: string): Promise<MeetingIngest> {
  const ingest = await loadRecord(db, 'meeting_ingests', 'meeting ingest', orgId, id);
  const tasks = await tasksOf(db, orgId, [id]);
  return { ...ingest, tasks: tasks.get(id) ?? [] } as MeetingIngest;
}

async function tasksOf(db: Queryable, orgId: string, ingestIds: string[]): Promise<Map<string, Task[]>> {
  const byIngest = new Map<string, Task[]>();
  if (ingestIds.length === 0) return byIngest;
  const { rows } = await db.query('SELECT * FROM tasks WHERE org_id = $1 AND meeting_ingest_id = ANY ($2::text[]) ORDER BY id', [orgId, ingestIds]);
  for (const row of rows) {
    const list = byIngest.get(row.meeting_ingest_id) ?? [];
    list.push(plainRecord(row) as Task);
    byIngest.set(row.meeting_ingest_id, list);
  }
  return byIngest;
}

/** The ingest and every task it carries, in the caller's transaction: all or nothing. */
async function insertMeetingIngest(tx: Queryable, orgId: string, input: CreateMeetingIngestInput): Promise<MeetingIngest> {
  const { rows } = await tx.query(
    `INSERT INTO meeting_ingests (id, org_id, title, occurred_at, participants, source, transcript)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [newId('mtg'), orgId, input.title, input.occurred_at, input.participants, input.source ?? null, input.transcript],
  );
  const ingest = plainRecord(rows[0]);
  const tasks: Task[] = [];
  for (const task of input.tasks) tasks.push(await insertTask(tx, orgId, task, ingest.id as string));
  return { ...ingest, tasks } as MeetingIngest;
}

export const createMeetingIngest = createWrite({
  name: 'meeting_ingests.create',
  resourceType: 'MeetingIngest',
  input: createMeetingIngestInput,
  refs: (ingest) => ingest.tasks.flatMap((task, i) => taskRefs(task).map((ref) => ({ ...ref, field: `tasks.${i}.${ref.field}` }))),
  // The whole batch is what a reviewer and the policy judge; the transcript itself is left out.
  describe: (ingest) => ({
    title: ingest.title,
    occurred_at: ingest.occurred_at,
    participants: ingest.participants,
    source: ingest.source,
    transcript_length: ingest.transcript.length,
    task_count: ingest.tasks.length,
    tasks: ingest.tasks,
  }),
  insert: insertMeetingIngest,
});
