import { getMe } from './me';
import type { Operation } from './operation';
import { approveReviewOperation, denyReviewOperation, getReviewOperation, listReviewsOperation } from './reviews';
import { createTaskOperation, listTasksOperation } from './tasks';

/** Every operation of the API, declared once; REST routes, MCP tools and the OpenAPI document loop over it. */
export const catalog: readonly Operation[] = [
  getMe,
  listTasksOperation,
  createTaskOperation,
  listReviewsOperation,
  getReviewOperation,
  approveReviewOperation,
  denyReviewOperation,
];

export type { Operation, OperationContext } from './operation';
