import { z } from 'zod';
import type { Queryable } from '../../db/database';
import { AppError, invalidFields } from '../kit/errors';
import { text } from '../kit/fields';
import { changedFields } from '../kit/rows';
import { planUndo, undoesContext, undoWrites, type Undone } from './undo';
import type { GatedWrite } from './writes';

// An agent's undo: a gated write of its own, decided by the policy like any write (Action::"writes.undo").

export const undoWriteInput = z.strictObject({
  write: text({ min: 1, max: 300 }).describe(
    "The applied write to undo: its workflow_id, as the write's answer (workflow_id), its review (workflow_id) and its audit events (write.applied) carry it",
  ),
});

export const undoneSchema = z
  .object({
    write: z.string().describe('The write undone (its workflow id)'),
    operation: z.string().describe('The operation of the write undone (tasks.update)'),
    resource_type: z.string().describe('The kind of record (Task)'),
    resource_id: z.string().describe('The record'),
    outcome: z.enum(['removed', 'reverted', 'restored']).describe('removed (an undone create), reverted (an undone update), restored (an undone delete, with its id)'),
    record: z.record(z.string(), z.unknown()).nullable().describe('The record as it is after the undo (at a new version), or null when the undo removed it'),
    undone_by: z.string().describe("The undo's id: the undo's workflow id (an agent's) or undo_… (a person's)"),
  })
  .describe('An applied write taken back');

const withoutBookkeeping = ({ version: _v, updated_at: _u, created_at: _c, ...fields }: Record<string, unknown>) => fields;

/** The key's abilities as they are now: an undo reaches the family of the write it undoes. */
async function assertMayWriteFamily(db: Queryable, orgId: string, apiKeyId: string, operation: string): Promise<void> {
  const family = operation.split('.')[0]!;
  const { rows } = await db.query('SELECT abilities FROM api_keys WHERE id = $1 AND org_id = $2', [apiKeyId, orgId]);
  const abilities = (rows[0]?.abilities as string[] | undefined) ?? [];
  if (!abilities.includes(`${family}.write`)) {
    throw new AppError('insufficient_ability', `This key lacks the ability ${family}.write, which undoing ${operation} needs`, { required: `${family}.write` });
  }
}

/**
 * The policy sees the record as it would be after the undo (for an undone create, the record the undo removes),
 * the original's resource type, and `context.undoes` (the write undone: operation, kind, record, when and by
 * which key it was applied, its review). `writeOf` finds the original's declaration (where its record lives).
 */
export function makeUndoWrite(writeOf: (operation: string) => GatedWrite | undefined): GatedWrite<typeof undoWriteInput> {
  return {
    name: 'writes.undo',
    resourceType: 'AppliedWrite',
    input: undoWriteInput,
    async propose(db, orgId, input, by) {
      // The write is a reference in the body: one the organization never applied is the input's fault, like any reference.
      const [plan] = await planUndo(db, orgId, [input.write], writeOf).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'not_found') throw invalidFields([{ field: 'write', message: 'no applied write of this organization has this id (not found)' }]);
        throw error;
      });
      await assertMayWriteFamily(db, orgId, by.apiKeyId, plan!.operation);
      const current = plan!.after ?? undefined;
      return {
        resourceId: plan!.resourceId,
        resourceType: plan!.resourceType,
        resource: plan!.restored ?? plan!.after ?? {},
        before: current,
        changes: current && plan!.restored ? changedFields(current, withoutBookkeeping(plan!.restored)) : undefined,
        context: { undoes: undoesContext(plan!) },
      };
    },
    async apply(tx, orgId, input, decided, by) {
      if (!decided.workflowId) throw new Error('an undo is applied by its workflow');
      await assertMayWriteFamily(tx, orgId, by.apiKeyId, (await planUndo(tx, orgId, [input.write], writeOf))[0]!.operation);
      const [undone] = await undoWrites(tx, orgId, [input.write], { actor: { type: 'api_key', id: by.apiKeyId }, undoId: decided.workflowId }, writeOf);
      return { resourceId: undone!.resource_id, resourceType: undone!.resource_type, result: undone as Undone };
    },
  };
}
