import {
  allHandlersFinished,
  condition,
  defineUpdate,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { searchAttributes } from '../../workflows/messages';
import type { FloorActivities } from './activities';

/** The floor's update: answered at once, as the gated write's first answer is once decided. */
export const floorAnswer = defineUpdate<string>('floorAnswer');

/**
 * The fair floor's update. Without a local activity it hands the workflow the answer to give back (a gated
 * Allow's answer, so that the update's payloads weigh what the gated write's do); with one, it carries nothing.
 */
export const fairFloorAnswer = defineUpdate<unknown, [answer?: unknown]>('fairFloorAnswer');

/**
 * The least a gated write can cost while every write starts a workflow: started by update-with-start, it
 * answers the update and completes in its first workflow task, with no activity of any kind.
 */
export async function floor(): Promise<void> {
  setHandler(floorAnswer, () => 'done');
  await condition(allHandlersFinished);
}

const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '8 seconds' });

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

/**
 * The fair floor: Temporal's cost of what a gated Allow carries, and nothing of the gate. The bench starts it
 * with a real gated Allow's input, memo, summary and five search attributes; it upserts the decision's search
 * attribute as the gated write does, answers the update with a real Allow's answer, and completes with
 * `{ answer }`, as the gated write does: the same events, the same payloads, the same visibility writes.
 */
export async function fairFloor(_request: unknown): Promise<{ answer: unknown }> {
  let answer: unknown;
  setHandler(fairFloorAnswer, (given) => {
    answer = given;
    upsertSearchAttributes([{ key: searchAttributes.decision, value: 'allow' }]);
    return given;
  });
  await condition(() => answer !== undefined && allHandlersFinished());
  return { answer };
}

/**
 * The fair floor with the gated write's first step as an empty local activity: it takes the request and gives
 * back a real Allow's answer (held by the worker), so the marker it records weighs what the gated write's does.
 */
export async function fairFloorWithLocalActivity(request: unknown): Promise<{ answer: unknown }> {
  const answer = local.answerOf(request);
  setHandler(fairFloorAnswer, () => answer);
  const answered = await answer;
  upsertSearchAttributes([{ key: searchAttributes.decision, value: 'allow' }]);
  await condition(allHandlersFinished);
  return { answer: answered };
}
