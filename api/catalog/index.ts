import { agentOperations } from './agents';
import { apiKeyOperations } from './api-keys';
import { auditOperations } from './audit';
import { policyOperations } from './policy';
import { bookingOperations } from './bookings';
import { calendarOperations } from './calendar';
import { changesetOperations } from './changesets';
import { customerOperations } from './customers';
import { expenseOperations } from './expenses';
import { invoiceOperations } from './invoices';
import { getMe } from './me';
import { meetingIngestOperations } from './meeting-ingests';
import { memoryOperations } from './memories';
import type { Operation } from './operation';
import { organizationOperations } from './organization';
import { getOverviewOperation } from './overview';
import { peopleOperations } from './people';
import { productOperations } from './products';
import { projectOperations } from './projects';
import {
  approveReviewOperation,
  countReviewsOperation,
  decideBatchOperation,
  denyReviewOperation,
  getReviewOperation,
  listReviewsOperation,
  reviewFilterChoicesOperation,
  reviewStatusOperation,
} from './reviews';
import { reviewContextOperation } from './review-context';
import { batchPasskeyChallengeOperation, reviewPasskeyChallengeOperation } from './review-passkeys';
import { taskOperations } from './tasks';
import { trustWindowOperations } from './trust-windows';
import { teamOperations } from './team';
import { notificationOperations } from './notifications';
import { slackOperations } from './slack';
import { webhookOperations } from './webhooks';
import { workLogOperations } from './work-logs';
import { writeOperations } from './writes';

/**
 * Every operation, declared once; REST routes, MCP tools, the console's routes and the OpenAPI document loop over
 * it, each taking the operations offered on its interface.
 */
export const catalog: readonly Operation[] = [
  getMe,
  getOverviewOperation,
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
  ...changesetOperations,
  listReviewsOperation,
  countReviewsOperation,
  reviewFilterChoicesOperation,
  getReviewOperation,
  reviewContextOperation,
  ...auditOperations,
  reviewStatusOperation,
  approveReviewOperation,
  denyReviewOperation,
  decideBatchOperation,
  ...writeOperations,
  reviewPasskeyChallengeOperation,
  batchPasskeyChallengeOperation,
  ...trustWindowOperations,
  ...policyOperations,
  ...organizationOperations,
  ...apiKeyOperations,
  ...peopleOperations,
  ...webhookOperations,
  ...notificationOperations,
  ...slackOperations,
  ...agentOperations,
];

const byTool = new Map(catalog.filter((operation) => operation.tool).map((operation) => [operation.tool!, operation]));

/** The operation an MCP tool name stands for, whoever asks. */
export function operationOfTool(name: string): Operation | undefined {
  return byTool.get(name);
}

export type { Operation, OperationContext } from './operation';
