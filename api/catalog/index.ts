import { bookingOperations } from './bookings';
import { calendarOperations } from './calendar';
import { customerOperations } from './customers';
import { expenseOperations } from './expenses';
import { invoiceOperations } from './invoices';
import { getMe } from './me';
import { meetingIngestOperations } from './meeting-ingests';
import { memoryOperations } from './memories';
import type { Operation } from './operation';
import { productOperations } from './products';
import { projectOperations } from './projects';
import { approveReviewOperation, denyReviewOperation, getReviewOperation, listReviewsOperation, reviewStatusOperation } from './reviews';
import { taskOperations } from './tasks';
import { teamOperations } from './team';
import { workLogOperations } from './work-logs';

/** Every operation of the API, declared once; REST routes, MCP tools and the OpenAPI document loop over it. */
export const catalog: readonly Operation[] = [
  getMe,
  ...taskOperations,
  ...projectOperations,
  ...customerOperations,
  ...calendarOperations,
  ...invoiceOperations,
  ...productOperations,
  ...bookingOperations,
  ...expenseOperations,
  ...workLogOperations,
  ...teamOperations,
  ...meetingIngestOperations,
  ...memoryOperations,
  listReviewsOperation,
  getReviewOperation,
  reviewStatusOperation,
  approveReviewOperation,
  denyReviewOperation,
];

const byTool = new Map(catalog.filter((operation) => operation.tool).map((operation) => [operation.tool!, operation]));

/** The operation an MCP tool name stands for, whoever asks. */
export function operationOfTool(name: string): Operation | undefined {
  return byTool.get(name);
}

export type { Operation, OperationContext } from './operation';
