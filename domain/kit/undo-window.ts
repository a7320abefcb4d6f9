// The organization's undo window, in SQL: read by the gate (undo) and the audit trail (whether a write may still be undone).

/**
 * SQL for until when an applied write (`a`, a row of applied_writes) may still be undone: null when it cannot be
 * (undone already, past its organization's window, or a write that cannot be undone). A changeset's write is
 * undone as its items (whether each can be is checked when it is undone).
 */
export function undoableUntilSql(a: string): string {
  return `(SELECT ${a}.applied_at + make_interval(days => uo.undo_window_days) FROM organizations uo
    WHERE uo.id = ${a}.org_id AND (${a}.record_table IS NOT NULL OR ${a}.resource_type = 'Changeset') AND ${a}.undone_by IS NULL AND ${a}.applied_at + make_interval(days => uo.undo_window_days) > now())`;
}
