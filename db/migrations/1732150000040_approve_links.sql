-- Up Migration

-- What confirming an Approve decision link needs besides the link (Deny links always work by the link alone):
-- 'anyone_with_link' (the link suffices), or 'signed_in' (the console session of the person the link was sent to).
-- "Approvals need a passkey" is stricter still and wins. Existing organizations keep what they had ('anyone_with_link',
-- written into every row as the column is added); organizations created from now on start with 'signed_in'.
ALTER TABLE organizations ADD COLUMN approve_links text NOT NULL DEFAULT 'anyone_with_link'
  CHECK (approve_links IN ('anyone_with_link', 'signed_in'));
ALTER TABLE organizations ALTER COLUMN approve_links SET DEFAULT 'signed_in';

-- Down Migration

ALTER TABLE organizations DROP COLUMN approve_links;
