-- Up Migration

-- Secrets kept in the database are sealed with SECRETS_ENCRYPTION_KEYS (domain/kit/secret-box.ts): webhook signing
-- secrets, Slack signing secrets, the Slack webhook URL and the OAuth server's keys, each stored as
-- `sealed:v1:<key id>:<base64url>`, which the start of every api and worker writes over what was stored in plain
-- text. A sealed Slack signing secret is longer than the 200 characters a plain one may have (the domain still
-- checks what a person sends: 8 to 200 visible characters).
ALTER TABLE slack_apps DROP CONSTRAINT slack_apps_signing_secret_check;
ALTER TABLE slack_apps ADD CONSTRAINT slack_apps_signing_secret_check CHECK (length(signing_secret) BETWEEN 8 AND 1000);

-- Down Migration

-- The values stay sealed: the version before this one cannot read them (set the secrets again after going back).
ALTER TABLE slack_apps DROP CONSTRAINT slack_apps_signing_secret_check;
ALTER TABLE slack_apps ADD CONSTRAINT slack_apps_signing_secret_check CHECK (length(signing_secret) BETWEEN 8 AND 200) NOT VALID;
