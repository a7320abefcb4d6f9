// How an agent is named to people. A key's label is what the person who made it wrote. A connected app's (OAuth)
// is the client_name the app chose for itself, which nobody checked: an app may call itself "Claude", or after a
// key the organization already trusts. So wherever such a name is shown (the console, emails, Slack, decision
// links) it is marked as the app's own word, and the policy reads `principal.label_verified`.

/** Whether a key's label was written by a person (true), or is a connected app's own name (false); `alias` names api_keys. */
export function labelVerifiedSql(alias: string): string {
  return `(${alias}.oauth_client_id IS NULL)`;
}

/** What a connected app's own name is called wherever it is shown. */
export const unverifiedNameNote = 'unverified app name';

/**
 * An agent in a sentence: a key's label as it is; a connected app's quoted and marked (`“Claude” (unverified app
 * name)`), so that it never reads as the key of that name.
 */
export function agentInWords(label: string, labelVerified: boolean): string {
  return labelVerified ? label : `“${label}” (${unverifiedNameNote})`;
}

/** The line that says what an unverified name is, where there is room for one (an email). */
export function unverifiedNameExplained(label: string): string {
  return `“${label}” is the name a connected app (OAuth) gave itself; nobody verified it, and it may imitate another agent's.`;
}
