import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { AppError, invalidFields } from '../kit/errors';
import { text } from '../kit/fields';
import { changedFields } from '../kit/rows';
import { planUndo, undoesContext, undoWrites, type Undone, type UndoPlan } from './undo';
import type { GatedWrite, Writer } from './writes';

// An agent's undo: a gated write of its own, decided by the policy like any write (Action::"writes.undo").

export const undoWriteInput = z.strictObject({
  write: text({ min: 1, max: 300 }).describe(
    "The applied write to undo: its workflow_id, as the write's answer (workflow_id), its review (workflow_id) and its audit events (write.applied) carry it; a changeset's workflow_id undoes all its applied items",
  ),
});

const undoneOutcome = z.enum(['removed', 'reverted', 'restored']);

export const undoneSchema = z
  .object({
    write: z.string().describe('The write undone (its workflow id)'),
    operation: z.string().describe('The operation of the write undone (tasks.update, or changesets.submit for a changeset)'),
    resource_type: z.string().describe('The kind of record (Task), or Changeset'),
    resource_id: z.string().describe('The record, or the changeset'),
    outcome: z
      .enum(['removed', 'reverted', 'restored', 'undone'])
      .describe('removed (an undone create), reverted (an undone update), restored (an undone delete, with its id); undone (a changeset: every applied item, see items)'),
    record: z.record(z.string(), z.unknown()).nullable().describe('The record as it is after the undo (at a new version), or null when the undo removed it (or for a changeset)'),
    undone_by: z.string().describe("The undo's id: the undo's workflow id (an agent's) or undo_… (a person's)"),
    items: z
      .array(
        z.object({
          index: z.number().int().describe("The item's index in the changeset"),
          operation: z.string().describe("The item's operation (tasks.create)"),
          resource_type: z.string().describe('The kind of record (Task)'),
          resource_id: z.string().describe('The record'),
          outcome: undoneOutcome.describe('removed, reverted or restored, as for a single write'),
          record: z.record(z.string(), z.unknown()).nullable().describe('The record as it is after the undo, or null when the undo removed it'),
        }),
      )
      .optional()
      .describe("A changeset's applied items, each as the undo left its record (taken back in reverse order); absent for a single write"),
  })
  .describe('An applied write taken back');

const withoutBookkeeping = ({ version: _v, updated_at: _u, created_at: _c, ...fields }: Record<string, unknown>) => fields;

/**
 * The key's abilities as they are now, and what this request was granted (a connected client's token may carry
 * fewer than its key): an undo reaches the family of the write it undoes.
 */
async function assertMayWriteFamily(db: Queryable, orgId: string, by: Writer, operation: string): Promise<void> {
  const family = operation.split('.')[0]!;
  const { rows } = await db.query('SELECT abilities FROM api_keys WHERE id = $1 AND org_id = $2', [by.apiKeyId, orgId]);
  const abilities = (rows[0]?.abilities as string[] | undefined) ?? [];
  if (!abilities.includes(`${family}.write`) || (by.abilities !== undefined && !by.abilities.includes(`${family}.write`))) {
    throw new AppError('insufficient_ability', `This key lacks the ability ${family}.write, which undoing ${operation} needs`, { required: `${family}.write` });
  }
}

/**
 * The policy sees the record as it would be after the undo (for an undone create, the record the undo removes),
 * the original's resource type, and `context.undoes` (the write undone: operation, kind, record, when and by
 * which key it was applied, its review). For a changeset, the resource is the Changeset (`resource.items`: each
 * applied item's operation, kind, record and the record as the undo leaves it, null when removed) and
 * `context.undoes` has kind "changeset" and `items`. `writeOf` finds the original's declaration (where its record lives).
 */
export function makeUndoWrite(writeOf: (operation: string) => GatedWrite | undefined): GatedWrite<typeof undoWriteInput> {
  const families = (plan: UndoPlan) => [...new Set(plan.records.map((record) => record.operation))];
  return {
    name: 'writes.undo',
    resourceType: 'AppliedWrite',
    input: undoWriteInput,
    async propose(db, orgId, input, by) {
      // The write is a reference in the body: one the organization never applied is the input's fault, like any reference.
      const [plan] = await planUndo(db, orgId, [input.write], writeOf, { seenBy: by }).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'not_found') throw invalidFields([{ field: 'write', message: 'no applied write of this organization has this id (not found)' }]);
        throw error;
      });
      for (const operation of families(plan!)) await assertMayWriteFamily(db, orgId, by, operation);
      if (plan!.changesetId) {
        return {
          resourceId: plan!.resourceId,
          resourceType: 'Changeset',
          resource: {
            changeset_id: plan!.changesetId,
            items: plan!.records.map((record) => ({
              index: record.item,
              operation: record.operation,
              kind: record.kind,
              resource_type: record.resourceType,
              resource_id: record.resourceId,
              restored: record.restored,
            })),
          },
          context: { undoes: undoesContext(plan!) },
        };
      }
      const record = plan!.records[0]!;
      const current = record.after ?? undefined;
      return {
        resourceId: record.resourceId,
        resourceType: record.resourceType,
        resource: record.restored ?? record.after ?? {},
        before: current,
        changes: current && record.restored ? changedFields(current, withoutBookkeeping(record.restored)) : undefined,
        context: { undoes: undoesContext(plan!) },
      };
    },
    async apply(tx, orgId, input, decided, by) {
      if (!decided.workflowId) throw new Error('an undo is applied by its workflow');
      for (const operation of families((await planUndo(tx, orgId, [input.write], writeOf, { seenBy: by }))[0]!)) await assertMayWriteFamily(tx, orgId, by, operation);
      const [undone] = await undoWrites(tx, orgId, [input.write], { actor: { type: 'api_key', id: by.apiKeyId }, undoId: decided.workflowId }, writeOf, { seenBy: by });
      return { resourceId: undone!.resource_id, resourceType: undone!.resource_type, result: undone as Undone };
    },
  };
}
