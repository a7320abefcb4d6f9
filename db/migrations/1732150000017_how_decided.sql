-- Up Migration

-- How each verdict was given: in the console, from a decision link, from a Slack button, or with a personal access
-- token; and, for an approval signed with a passkey, the WebAuthn assertion and the payload it signed.
ALTER TABLE reviews ADD COLUMN decided_via text CHECK (decided_via IN ('console', 'link', 'slack', 'api_token'));
-- (null: an approval given before this was kept, wherever it was given)
ALTER TABLE review_approvals ADD COLUMN via text CHECK (via IN ('console', 'link', 'slack', 'api_token'));
ALTER TABLE review_approvals ADD COLUMN payload_digest text;
ALTER TABLE review_approvals ADD COLUMN passkey jsonb;

-- The payload each passkey-signed verdict signed, by its digest (the SHA-256 of its canonical JSON), kept as long
-- as the audit trail that names it: an export carries it beside the signed event for the offline verifier.
CREATE TABLE signed_payloads (
  digest      text PRIMARY KEY,
  org_id      text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  payload     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Whether every approval must be signed by the approving person's passkey (off: a session's word suffices).
ALTER TABLE organizations ADD COLUMN approvals_need_passkey boolean NOT NULL DEFAULT false;

-- Down Migration

ALTER TABLE organizations DROP COLUMN approvals_need_passkey;
DROP TABLE signed_payloads;
ALTER TABLE review_approvals DROP COLUMN passkey;
ALTER TABLE review_approvals DROP COLUMN payload_digest;
ALTER TABLE review_approvals DROP COLUMN via;
ALTER TABLE reviews DROP COLUMN decided_via;
