/**
 * The host of an OAuth client's id when the id is the https address of its metadata document: the one part of an
 * app's identity that was checked (its name is the app's own word). Null for an id the client was given when it
 * registered itself.
 */
export function clientIdHost(clientId: string): string | null {
  if (!clientId.startsWith('https://')) return null;
  try {
    return new URL(clientId).host;
  } catch {
    return null;
  }
}
