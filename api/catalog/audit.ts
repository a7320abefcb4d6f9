import { z } from 'zod';
import { listAuditEvents } from '../../domain/audit/trail';
import { rolesThat } from '../../domain/identity/actors';
import { text, utcInstant } from '../../domain/kit/fields';
import { pageInput } from '../../domain/kit/pagination';
import { defineOperation } from './operation';

// The audit trail, for people: every decision, review, write, key, person and policy change of the organization.

export const auditFilterInput = {
  since: utcInstant.optional().describe('Events at or after this instant (RFC 3339)'),
  until: utcInstant.optional().describe('Events before this instant (RFC 3339)'),
  api_key_id: text({ max: 100 }).optional().describe('Events of this key: its gated writes, and its creation and revocation'),
  user_id: text({ max: 100 }).optional().describe('Events of this person: what they did (approved, invited, signed in) and what was done to them'),
  operation: text({ max: 100 }).optional().describe('Events of gated writes of this operation (tasks.create)'),
  decision: z.enum(['allow', 'review', 'deny', 'refused']).optional().describe('Decisions (gate.decided) that came out so'),
  type: text({ max: 100 }).optional().describe('Events of this type (gate.decided, review.approved, api_key.created, …)'),
};

export const auditEventSchema = z.object({
  id: z.string().describe('The event (evt_…); ids sort in the order events were recorded'),
  type: z
    .string()
    .describe('gate.decided, write.applied, write.failed, review.approved, review.denied, review.expired, review.withdrawn, api_key.created, api_key.revoked, oauth.connected, oauth.refreshed, oauth.disconnected, person.invited, policy.updated, …'),
  actor: z
    .object({
      type: z.enum(['api_key', 'user', 'system']).describe('api_key (an agent or script), user (a person), system (expiry, the CLI)'),
      id: z.string().nullable().describe('The key (key_…) or person (usr_…); for the system, what it was (cli) or null'),
      name: z.string().nullable().describe("The key's label or the person's email, as they are now"),
    })
    .describe('Who did it'),
  workflow_id: z.string().nullable().describe("The gated write's workflow, for gate, write and review events"),
  review_id: z.string().nullable().describe('The review (rev_…) of a held write'),
  resource_type: z.string().nullable().describe('The kind of record a write touched (tasks)'),
  resource_id: z.string().nullable().describe('The record a write touched, or the key or person an event is about'),
  operation: z.string().nullable().describe('The gated write it is about (tasks.create)'),
  decision: z.string().nullable().describe('allow, review, deny or refused, for gate.decided'),
  data: z.record(z.string(), z.unknown()).describe("The event's details: the decision's reason and rules, a reviewer's comment, a key's label, …"),
  created_at: z.string().describe('When it was recorded (RFC 3339, UTC)'),
  undone_by: z
    .string()
    .nullable()
    .describe("For write.applied: the undo that took the write back (the write.undone event's workflow_id); null otherwise. A write.undone event names the write it undid in data.undoes"),
  undoable_until: z.string().nullable().describe('For write.applied: until when the write may be undone (POST /v1/writes/{write}/undo, or undo_write for agents); null when it cannot be'),
});

export const listAuditEventsOperation = defineOperation({
  kind: 'read',
  name: 'audit.events',
  family: 'audit',
  summary: 'The audit trail',
  description:
    "Every recorded event of the organization, newest first: policy decisions, reviews and their outcomes, applied and failed writes, keys, people and policy changes. Filter by time, key, person, operation, decision or type. For the organization's owners, admins and reviewers.",
  method: 'GET',
  path: '/audit-events',
  list: true,
  input: z.strictObject({ ...auditFilterInput, ...pageInput }),
  output: z.array(auditEventSchema),
  access: { person: { roles: rolesThat.readAudit } },
  handler: (input, { db, caller }) => listAuditEvents(db, caller.organization.id, input),
});

export const auditOperations = [listAuditEventsOperation];
