import type { z } from 'zod';
import type { Queryable } from '../db/database';
import { createTaskInput, insertTask } from './tasks';

/** What the policy sees of a write before it runs. */
export interface Proposal {
  resourceId: string;
  /** The record as it would be after the write. */
  resource: Record<string, unknown>;
  /** For updates and deletes: the current record and the fields that change. */
  before?: Record<string, unknown>;
  changes?: Record<string, unknown>;
}

export interface AppliedResource {
  resourceId: string;
  result: unknown;
}

/**
 * A write subject to policy. `propose` reads what the policy needs; `apply` performs the write inside the
 * transaction that also records it, so it runs once per workflow however often it is retried.
 */
export interface GatedWrite<Input = unknown> {
  operation: string;
  /** The Cedar entity type of the resource. */
  resourceType: string;
  input: z.ZodType<Input>;
  propose(db: Queryable, orgId: string, input: Input): Promise<Proposal>;
  apply(tx: Queryable, orgId: string, input: Input): Promise<AppliedResource>;
}

function defineGatedWrite<Input>(write: GatedWrite<Input>): GatedWrite<Input> {
  return write;
}

const createTask = defineGatedWrite({
  operation: 'tasks.create',
  resourceType: 'Task',
  input: createTaskInput,
  async propose(_db, _orgId, input) {
    return { resourceId: 'new', resource: { ...input } };
  },
  async apply(tx, orgId, input) {
    const task = await insertTask(tx, orgId, input);
    return { resourceId: task.id, result: task };
  },
});

export const gatedWrites: Record<string, GatedWrite<any>> = Object.fromEntries(
  [createTask].map((write) => [write.operation, write]),
);

export function gatedWrite(operation: string): GatedWrite<unknown> | undefined {
  return gatedWrites[operation];
}
