import { api } from '../../lib/api';

export type ReviewStatus = 'pending' | 'approved' | 'denied' | 'expired';

export interface Review {
  id: string;
  status: ReviewStatus;
  operation: string;
  proposed: Record<string, unknown>;
  resource: Record<string, unknown>;
  before: Record<string, unknown> | null;
  policy: { decision_id: string; reason: string; policy_ids: string[]; policy_version: number; errors: string[] };
  submitted_by: { api_key_id: string; api_key_label: string; interface: 'rest' | 'mcp' };
  created_at: string;
  expires_at: string;
  /** Set when the review waited past the organization's escalation wait: the tier told (admins, owners). */
  escalation: { to: string; at: string } | null;
  /** How many distinct people must approve, and who has so far. */
  approvals: { required: number; given: { user_id: string; email: string; at: string; comment: string | null }[] };
  /** A reviewer's edit of the held write, which is what runs once approved (proposed keeps the agent's version). */
  edit: ReviewEdit | null;
  decided_at: string | null;
  decided_by: { user_id: string; email: string } | null;
  comment: string | null;
  applied_at: string | null;
  result: unknown;
  failure: { code: string; message: string } | null;
  workflow_id: string;
}

export interface ReviewEdit {
  id: string;
  /** The fields whose values the reviewer changed from the agent's version. */
  fields: string[];
  by: { user_id: string; email: string };
  at: string;
  /** The write as the reviewer edited it. */
  input: Record<string, unknown>;
  /** The record as it would be after the edited write. */
  resource: Record<string, unknown>;
  /** The policy's decision on the edited write. */
  decision: { decision: 'allow' | 'review'; reason: string; policy_ids: string[]; policy_version: number };
}

/** Only a held create or update can be edited before it is approved. */
export const editable = (operation: string) => /\.(create|update)$/.test(operation);

export interface ReviewFilters {
  status?: ReviewStatus;
  api_key_id?: string;
  operation?: string;
}

export const reviewsApi = {
  list(filters: ReviewFilters, background = false) {
    const query = new URLSearchParams({ limit: '50' });
    for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
    return api.get<Review[]>(`/v1/reviews?${query}`, { background });
  },
  get: (id: string, background = false) => api.get<Review>(`/v1/reviews/${encodeURIComponent(id)}`, { background }),
  /** An approval names the edit the person saw, if the review holds one: it counts for that version only. */
  decide: (review: Review, verdict: 'approve' | 'deny', comment: string) =>
    api.post<Review>(`/v1/reviews/${encodeURIComponent(review.id)}/${verdict}`, {
      ...(comment.trim() ? { comment: comment.trim() } : {}),
      ...(verdict === 'approve' && review.edit ? { seen_edit: review.edit.id } : {}),
    }),
  /** Approves with the fields changed over the agent's input; the policy decides the edited write again. */
  approveWithEdit: (id: string, edit: Record<string, unknown>, comment: string) =>
    api.post<Review>(`/v1/reviews/${encodeURIComponent(id)}/approve`, comment.trim() ? { edit, comment: comment.trim() } : { edit }),
};
