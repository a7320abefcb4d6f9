import { calendarOperations } from './calendar';
import { customerOperations } from './customers';
import { getMe } from './me';
import { meetingIngestOperations } from './meeting-ingests';
import { memoryOperations } from './memories';
import type { Operation } from './operation';
import { projectOperations } from './projects';
import { recordOperations } from './records';
import { approveReviewOperation, denyReviewOperation, getReviewOperation, listReviewsOperation } from './reviews';
import { taskOperations } from './tasks';

/** Every operation of the API, declared once; REST routes, MCP tools and the OpenAPI document loop over it. */
export const catalog: readonly Operation[] = [
  getMe,
  ...taskOperations,
  ...projectOperations,
  ...customerOperations,
  ...calendarOperations,
  ...recordOperations,
  ...meetingIngestOperations,
  ...memoryOperations,
  listReviewsOperation,
  getReviewOperation,
  approveReviewOperation,
  denyReviewOperation,
];

export type { Operation, OperationContext } from './operation';
