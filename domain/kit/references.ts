import type { Queryable } from '../../db/database';
import { invalidFields, type FieldProblem } from './errors';

export type OwnedTable = 'projects' | 'team_members' | 'customers' | 'tasks' | 'products' | 'events';

const labels: Record<OwnedTable, string> = {
  projects: 'project',
  team_members: 'team member',
  customers: 'customer',
  tasks: 'task',
  products: 'product',
  events: 'event',
};

/** A field of a write that names another record of the organization. */
export interface Reference {
  table: OwnedTable;
  /** Where the reference stands in the input, as validation errors name it (`attendee_ids.2`). */
  field: string;
  id: string | null | undefined;
}

/**
 * A reference to another record must stay inside the organization: a foreign key alone would let a task
 * point at another organization's project.
 */
export async function assertOwned(db: Queryable, orgId: string, refs: Reference[]): Promise<void> {
  const fields: FieldProblem[] = [];
  for (const ref of refs) {
    if (ref.id === null || ref.id === undefined) continue;
    const { rowCount } = await db.query(`SELECT 1 FROM ${ref.table} WHERE org_id = $1 AND id = $2`, [orgId, ref.id]);
    if (!rowCount) fields.push({ field: ref.field, message: `no ${labels[ref.table]} ${ref.id} in this organization` });
  }
  if (fields.length) throw invalidFields(fields);
}
