import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { GateAnswer } from '../domain/gate/contract';

/**
 * Answers the first decision of a gated write: at once for Deny and Review, once the write is applied
 * for Allow. The api sends it with the workflow's start (update-with-start), so one round trip decides.
 */
export const gateAnswerUpdate = defineUpdate<GateAnswer>('gateAnswer');

/**
 * Tells a waiting workflow that a person decided its review. It carries no verdict: the workflow reads
 * the review record, so a signal sent around the application can never approve a write.
 */
export const reviewDecidedSignal = defineSignal('reviewDecided');

export const gatedWriteWorkflowType = 'gatedWrite';
