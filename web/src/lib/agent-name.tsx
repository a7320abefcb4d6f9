// An agent as people see it. A key's label is what the person who made it wrote; a connected app's (OAuth) is the
// name the app gave itself, which nobody verified (it may imitate another agent's, numbered then: "Claude (2)"), so
// it is always shown marked as such.

/** What an unverified name is, for the marking's tooltip and for sentences that need the whole story. */
export const unverifiedNameExplained = 'A connected app (OAuth) gave itself this name; nobody verified it, and it may imitate another agent’s.';

/** An agent quoted in a sentence: “test agent”, or “Claude” (unverified app name). */
export function agentInWords(label: string, verified: boolean): string {
  return verified ? `“${label}”` : `“${label}” (unverified app name)`;
}

/** An agent's name, quoted when `quoted`, followed for a connected app by the marking that it is the app's own word. */
export function AgentName({ label, verified, quoted = false }: { label: string; verified: boolean; quoted?: boolean }) {
  const name = quoted ? `“${label}”` : label;
  if (verified) return <>{name}</>;
  return (
    <>
      {name}{' '}
      <span className="state waiting unverified-name" title={unverifiedNameExplained}>
        unverified app name
      </span>
    </>
  );
}
