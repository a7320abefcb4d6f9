import type { Client } from '@temporalio/client';

export interface HistoryShape {
  /** Events in the workflow's history. */
  events: number;
  /** Workflow tasks completed (each one a round of the worker's work and a write of the history). */
  workflowTasks: number;
  /** Activity tasks scheduled through Temporal (local activities are markers, not tasks). */
  activityTasks: number;
  /** Markers recorded: one per local activity. */
  markers: number;
}

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
  };
}

/** The shapes of several workflows of one kind: the same for all, or the range when they differ. */
export async function historyShapes(client: Client, workflowIds: string[]): Promise<{ workflows: number } & Record<keyof HistoryShape, { min: number; max: number }>> {
  const shapes: HistoryShape[] = [];
  for (const id of workflowIds) shapes.push(await historyShape(client, id));
  const range = (key: keyof HistoryShape) => ({ min: Math.min(...shapes.map((s) => s[key])), max: Math.max(...shapes.map((s) => s[key])) });
  return { workflows: shapes.length, events: range('events'), workflowTasks: range('workflowTasks'), activityTasks: range('activityTasks'), markers: range('markers') };
}
