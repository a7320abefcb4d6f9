-- Up Migration

-- Slack interactivity (domain/notify/slack-*.ts, api/slack/plugin.ts): the Approve and Deny buttons of a held
-- write's Slack message, pressed by a Slack user linked to a person of the organization.

-- An organization's Slack app: the signing secret its requests are signed with (never read back to anyone: reads
-- answer whether it is set), and the Slack workspace (team) its presses must come from (null: bound by the first
-- verified request).
CREATE TABLE slack_apps (
  org_id          text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  signing_secret  text CHECK (length(signing_secret) BETWEEN 8 AND 200),
  team_id         text CHECK (team_id ~ '^[A-Z0-9]{2,30}$'),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A Slack user linked to a person, by that person, signed in to the console: a press counts as theirs. One Slack
-- user per person and workspace: a newer link replaces the older, so that a link confirmed by mistake (or talked
-- into) cannot sit unseen beside the person's own.
CREATE TABLE slack_links (
  org_id         text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slack_team_id  text NOT NULL,
  slack_user_id  text NOT NULL,
  user_id        text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  linked_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, slack_team_id, slack_user_id),
  UNIQUE (org_id, user_id, slack_team_id)
);
CREATE INDEX slack_links_user ON slack_links (user_id);

-- A one-time offer to link a Slack user, answered to their first press: the link's secret is kept as its SHA-256.
-- The Slack user's display name is not kept: anyone can call themselves anything in a workspace, so it would only
-- lend a stranger's offer a familiar face.
CREATE TABLE slack_link_offers (
  token_digest     text PRIMARY KEY,
  org_id           text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slack_team_id    text NOT NULL,
  slack_user_id    text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  used_at          timestamptz,
  used_by          text REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX slack_link_offers_org ON slack_link_offers (org_id, expires_at);

-- Requests already seen (the SHA-256 of their signature), so that a replayed one is refused; kept for longer than
-- the timestamp window, then swept.
CREATE TABLE slack_requests_seen (
  org_id            text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  signature_digest  text NOT NULL,
  seen_at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, signature_digest)
);
CREATE INDEX slack_requests_seen_at ON slack_requests_seen (seen_at);

-- Down Migration

DROP TABLE slack_requests_seen;
DROP TABLE slack_link_offers;
DROP TABLE slack_links;
DROP TABLE slack_apps;
