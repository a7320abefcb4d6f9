import type { Client } from '@temporalio/client';
import { round, summarize } from './stats';

export interface HistoryShape {
  /** Events in the workflow's history. */
  events: number;
  /** Workflow tasks completed (each one a round of the worker's work and a write of the history). */
  workflowTasks: number;
  /** Activity tasks scheduled through Temporal (local activities are markers, not tasks). */
  activityTasks: number;
  /** Markers recorded: one per local activity. */
  markers: number;
  /** Milliseconds the workers spent on the workflow tasks (each task's started to completed, by the server's clock). */
  workerMs: number;
  /** Milliseconds from the workflow's start to its first answer (the update completed), by the server's clock. */
  startToAnswerMs: number;
}

type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;
const ms = (time: Timestamp) => Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;

/** What one workflow's history holds, read back through the client once it has completed. */
export async function historyShape(client: Client, workflowId: string): Promise<HistoryShape> {
  const handle = client.workflow.getHandle(workflowId);
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  return {
    events: events.length,
    workflowTasks: events.filter((event) => event.workflowTaskCompletedEventAttributes).length,
    activityTasks: events.filter((event) => event.activityTaskScheduledEventAttributes).length,
    markers: events.filter((event) => event.markerRecordedEventAttributes).length,
    workerMs: events.reduce((sum, event) => {
      const started = event.workflowTaskCompletedEventAttributes?.startedEventId;
      if (!started) return sum;
      const startedEvent = events.find((e) => Number(e.eventId) === Number(started));
      return sum + ms(event.eventTime as Timestamp) - ms(startedEvent?.eventTime as Timestamp);
    }, 0),
    startToAnswerMs:
      ms(events.find((event) => event.workflowExecutionUpdateCompletedEventAttributes)?.eventTime as Timestamp) - ms(events[0]?.eventTime as Timestamp),
  };
}

/** The shapes of several workflows of one kind: the same for all, or the range when they differ. */
export type Counted = 'events' | 'workflowTasks' | 'activityTasks' | 'markers';

export async function historyShapes(
  client: Client,
  workflowIds: string[],
): Promise<{ workflows: number } & Record<Counted, { min: number; max: number }> & { workerMsP50: number; startToAnswerMsP50: number }> {
  const shapes: HistoryShape[] = [];
  for (const id of workflowIds) shapes.push(await historyShape(client, id));
  const range = (key: Counted) => ({ min: Math.min(...shapes.map((s) => s[key])), max: Math.max(...shapes.map((s) => s[key])) });
  const p50 = (key: 'workerMs' | 'startToAnswerMs') => round(summarize(shapes.map((s) => s[key])).p50, 2);
  return {
    workflows: shapes.length,
    events: range('events'),
    workflowTasks: range('workflowTasks'),
    activityTasks: range('activityTasks'),
    markers: range('markers'),
    workerMsP50: p50('workerMs'),
    startToAnswerMsP50: p50('startToAnswerMs'),
  };
}
