import { z } from 'zod';
import { changesetInputOf, changesetLimit, changesetOperation } from '../../domain/gate/changesets/schema';
import { resourceWrites } from '../../domain/resources';
import { remediationSchema } from '../../domain/gate/remediation';
import type { GatedWrite } from '../../domain/gate/writes';
import { gatedOperation } from './define';

/** What an applied changeset answers: each item's record as written, in order. */
export const changesetResultSchema = z.object({
  changeset_id: z.string().describe('The changeset (chs_…)'),
  mode: z.enum(['all_or_nothing', 'divisible']).describe('As submitted'),
  items: z
    .array(
      z.object({
        index: z.number().int().describe('The item, from 0, in the order sent'),
        ref: z.string().nullable().describe("The item's ref, if it had one"),
        operation: z.string().describe('The write, e.g. tasks.create'),
        decision: z.enum(['allow', 'review', 'deny']).describe("The policy's decision on this item, as if alone"),
        reason: z.string().describe('Why'),
        policy_ids: z.array(z.string()).describe('The rules that decided'),
        resource_type: z.string().describe('The Cedar entity type of the record (Task, Project, …)'),
        resource_id: z.string().describe("The record's id"),
        result: z.unknown().describe('The record as written; null for an item a reviewer rejected'),
        verdict: z.enum(['approved', 'rejected']).nullable().optional().describe("A reviewer's verdict on this item of a divisible changeset"),
        remediation: remediationSchema.optional().describe('For a held or denied item: the rules that decided it and what to do next'),
      }),
    )
    .describe('Every item, in order'),
});

/**
 * A changeset's input: any of the resources' gated writes as items. An undo is not one: it takes back a write already
 * applied, on its own (a changeset is undone whole with one undo).
 */
const changesetInput = changesetInputOf(resourceWrites);

/**
 * The changeset as a gated write for the catalog: it names the operation and parses its input; the changeset
 * workflow decides and applies it (domain/gate/changesets), never this.
 */
const changesetWrite: GatedWrite<typeof changesetInput> = {
  name: changesetOperation,
  resourceType: 'Changeset',
  input: changesetInput,
  propose() {
    throw new Error('a changeset is decided by the changeset workflow');
  },
  apply() {
    throw new Error('a changeset is applied by the changeset workflow');
  },
};

export const changesetOperations = [
  {
    ...gatedOperation({
      write: changesetWrite,
      tool: 'submit_changeset',
      summary: 'Submit several writes as one changeset',
      description: `Submits up to ${changesetLimit} gated writes (any mix of creates, updates and deletes: tasks.create, projects.update, tasks.delete, …) as one changeset, applied in one transaction: all of them or none. Each item is {operation, input} with that write's own input (path fields such as id inside input), and optionally a ref: a later item refers to the record it makes as "$ref:<ref>" in any field (e.g. {"ref": "proj", "operation": "projects.create", …} then {"operation": "tasks.create", "input": {"title": "…", "project_id": "$ref:proj"}}). Each item is decided by the policy as if sent alone (an item naming a record made earlier is decided with that record as the changeset would make it); the changeset is decided by its strictest item: any Deny refuses the whole (403 policy_denied, details.items names each item's decision, reason and remediation), else any Review holds the whole as one review (202 pending_review), else every item is applied (201, each item's record). The key needs each item's own write ability. mode "divisible" lets a reviewer approve some items and reject others.`,
      method: 'POST',
      path: '/changesets',
      output: changesetResultSchema,
      // Any read-write key: each item's own write ability is checked as the changeset is submitted.
      access: { apiKey: { ability: null } },
    }),
    changeset: true as const,
  },
];
