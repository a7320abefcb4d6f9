-- Up Migration

-- Reviewer notifications and escalation (domain/notify/notifications.ts, workflows/notifications.ts).

-- How long a review may wait before the next tier is told (null: never), and a Slack-compatible incoming webhook.
ALTER TABLE organizations
  ADD COLUMN review_escalation_ms integer CHECK (review_escalation_ms > 0),
  ADD COLUMN slack_webhook_url text;

-- What each person is told by email, and the team member they are (an inactive member, or one out of office, is
-- skipped when reviewers are told).
ALTER TABLE users
  ADD COLUMN notifications text[] NOT NULL DEFAULT '{review.held,review.escalated,webhook.disabled}',
  ADD COLUMN team_member_id text REFERENCES team_members(id) ON DELETE SET NULL;

-- The tier a review escalated to last (admins, owners), and when.
ALTER TABLE reviews
  ADD COLUMN escalated_to text,
  ADD COLUMN escalated_at timestamptz;

-- A calendar event is a meeting, or time a team member is out of office.
ALTER TABLE events
  ADD COLUMN kind text NOT NULL DEFAULT 'meeting' CHECK (kind IN ('meeting', 'out_of_office'));

-- Down Migration

ALTER TABLE events DROP COLUMN kind;
ALTER TABLE reviews DROP COLUMN escalated_at, DROP COLUMN escalated_to;
ALTER TABLE users DROP COLUMN team_member_id, DROP COLUMN notifications;
ALTER TABLE organizations DROP COLUMN slack_webhook_url, DROP COLUMN review_escalation_ms;
