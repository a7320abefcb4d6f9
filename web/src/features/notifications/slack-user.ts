// A Slack user as the console names them: by the names Slack's signed press gave (the user's handle, the
// workspace's domain) where there are some, else by Slack's ids.

interface NamedSlackUser {
  workspace: string;
  workspace_name: string | null;
  slack_user: string;
  slack_user_name: string | null;
}

/** "@rita", or the Slack id where the press gave no name. */
export const slackUserName = (slack: NamedSlackUser) => (slack.slack_user_name ? `@${slack.slack_user_name}` : slack.slack_user);

/** "acme-hq", or the workspace's id where the press gave no name. */
export const workspaceName = (slack: NamedSlackUser) => slack.workspace_name ?? slack.workspace;

/** Whether the names shown are Slack's names, not its ids (older links kept none). */
export const isNamed = (slack: NamedSlackUser) => slack.slack_user_name !== null || slack.workspace_name !== null;
