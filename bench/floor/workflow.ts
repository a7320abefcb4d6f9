import { allHandlersFinished, condition, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { floorActivities } from './activities';

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

const local = proxyLocalActivities<typeof floorActivities>({ startToCloseTimeout: '8 seconds' });

/**
 * The floor plus one local activity that does nothing, as the gated write's first step runs: what the SDK's local
 * activity costs on its own (the gated write adds its transaction, its policy and the api to this).
 */
export async function floorWithLocalActivity(): Promise<void> {
  const answer = local.nothing();
  setHandler(floorAnswer, () => answer);
  await answer;
  await condition(allHandlersFinished);
}
