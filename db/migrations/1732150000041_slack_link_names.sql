-- Up Migration

-- Who pressed, by name, as Slack's signed press says it: the workspace's domain and the Slack user's name (their
-- handle), shown on the page that links the Slack user to a person, so that an offer forwarded by someone else is
-- visibly someone else's. Null for offers and links made before names were kept.
ALTER TABLE slack_link_offers ADD COLUMN slack_team_domain text;
ALTER TABLE slack_link_offers ADD COLUMN slack_user_name text;
ALTER TABLE slack_links ADD COLUMN slack_team_domain text;
ALTER TABLE slack_links ADD COLUMN slack_user_name text;

-- Down Migration

ALTER TABLE slack_links DROP COLUMN slack_user_name;
ALTER TABLE slack_links DROP COLUMN slack_team_domain;
ALTER TABLE slack_link_offers DROP COLUMN slack_user_name;
ALTER TABLE slack_link_offers DROP COLUMN slack_team_domain;
