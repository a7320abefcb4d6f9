import { allHandlersFinished, condition, defineUpdate, setHandler } from '@temporalio/workflow';

/** The floor's update: answered at once, as the gated write's first answer is once decided. */
export const floorAnswer = defineUpdate<string>('floorAnswer');

/**
 * The least a gated write can cost while every write starts a workflow: started by update-with-start, it
 * answers the update and completes in its first workflow task, with no activity of any kind.
 */
export async function floor(): Promise<void> {
  setHandler(floorAnswer, () => 'done');
  await condition(allHandlersFinished);
}
