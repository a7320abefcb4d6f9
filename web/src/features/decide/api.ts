import { api } from '../../lib/api';
import type { ItemReference } from '../../lib/changeset-references';
import { signVerdict, type VerdictChallenge } from '../../lib/passkeys';

// A decision link's calls (api/decision-links/routes.ts): read the link, which decides nothing, and confirm it
// (signed first with the person's passkey where the organization needs approvals signed). Each is a POST with the
// link's token in its body: the token is never in an address the browser sends.

export type LinkVerdict = 'approved' | 'denied';
export type LinkState = 'usable' | 'used' | 'decided' | 'expired' | 'withdrawn' | 'payload_changed';
/** What confirming the link needs besides it: nothing, its person signed in, or their passkey. */
export type LinkConfirmNeeds = 'link' | 'signed_in' | 'passkey';
/** Whom this browser is signed in to the console as: the link's person, someone else, nobody. */
export type LinkSession = 'this_person' | 'someone_else' | 'none';

export interface DecisionLink {
  verdict: LinkVerdict;
  state: LinkState;
  person: { email: string; name: string | null };
  organization: { name: string; slug: string };
  confirm_needs: LinkConfirmNeeds;
  session: LinkSession;
  review: {
    id: string;
    status: 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';
    operation: string;
    agent: string;
    /** false: a connected app's own name, which nobody verified. */
    agent_label_verified: boolean;
    reason: string;
    expires_at: string;
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
    deleting: boolean;
    edit: { by: string; fields: { field: string; agent: unknown; edited: unknown }[] } | null;
    approvals: { required: number; given: number };
    decided_by: string | null;
    changeset: {
      mode: 'all_or_nothing' | 'divisible';
      item_count: number;
      summary: string;
      items: {
        index: number;
        ref: string | null;
        operation: string;
        decision: 'allow' | 'review' | 'deny';
        reason: string;
        policy_ids: string[];
        input: Record<string, unknown>;
        references: ItemReference[];
        before: Record<string, unknown> | null;
        after: Record<string, unknown>;
        deleting: boolean;
      }[];
    } | null;
  };
}

export interface DecisionOutcome {
  review_id: string;
  status: 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';
  approvals: { required: number; given: number };
  applied: boolean;
  failure: { code: string; message: string } | null;
}

/** A WebAuthn assertion over the verdict's challenge, as the passkey ceremony gives it (base64url fields). */
export interface PasskeyAssertion {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  signed_at: string;
}

export const decisionLinksApi = {
  read: (token: string) => api.post<DecisionLink>('/decision-links/read', { token }),
  confirm: (token: string, body: { comment?: string; passkey?: PasskeyAssertion }) => api.post<DecisionOutcome>('/decision-links/confirm', { token, ...body }),
  /**
   * The link's person's passkey signs its verdict: the review, the payload the link was sent for, the verdict, now.
   * The challenge names no passkey (the link's holder is not known to be its person): the authenticator offers its own.
   */
  sign: async (token: string): Promise<PasskeyAssertion> => signVerdict(await api.post<VerdictChallenge>('/decision-links/passkey-challenge', { token }), 'discoverable'),
};
