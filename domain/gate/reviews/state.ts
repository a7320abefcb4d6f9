/**
 * A review's states: waiting for people, then approved, denied or expired; or withdrawn, when the key that made the
 * held write was revoked (or its connection ended) while it waited (./withdraw.ts).
 */
export const reviewStatuses = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const;
export type ReviewStatus = (typeof reviewStatuses)[number];

/**
 * A pending review past its deadline counts as expired, even before its workflow has recorded it. The one rule of
 * a review's state in SQL, for the review table under `alias`, in its two forms: the filter of the reviews still
 * waiting (which an index on the status can serve), and the status a review reads as. Every query that reads a
 * review's state goes through these.
 */
export const stillPendingSql = (alias: string) => `(${alias}.status = 'pending' AND ${alias}.expires_at > now())`;
export const reviewStatusSql = (alias: string) => `CASE WHEN ${stillPendingSql(alias)} THEN 'pending' WHEN ${alias}.status = 'pending' THEN 'expired' ELSE ${alias}.status END`;

/**
 * The filter of reviews reading as `status`, in a form the indexes on the status serve (a comparison with
 * reviewStatusSql would read every review of the organization).
 */
export function hasStatusSql(alias: string, status: ReviewStatus): string {
  if (status === 'pending') return stillPendingSql(alias);
  if (status === 'expired') return `(${alias}.status = 'expired' OR (${alias}.status = 'pending' AND ${alias}.expires_at <= now()))`;
  if (status === 'approved') return `${alias}.status = 'approved'`;
  if (status === 'denied') return `${alias}.status = 'denied'`;
  if (status === 'withdrawn') return `${alias}.status = 'withdrawn'`;
  throw new Error(`not a review status: ${String(status)}`);
}
