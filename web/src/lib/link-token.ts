// A one-time link's secret (a decision link's, a Slack link offer's) as the browser holds it. A link carries it in
// its fragment, which no request ever sends; an older link carried it as the last part of its path. The page takes
// it from either, sends it only in the bodies of its calls, and keeps it in this tab's session storage (never in a
// query) while the person signs in on the way.

const keptKey = (link: string) => `gatehouse.link.${link}`;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return '';
  }
}

/** The secret in the address: the fragment (`#…`), else the path's segment an older link put it in. */
export function tokenInAddress(hash: string, pathToken: string | undefined): string {
  return decoded(hash.replace(/^#/, '')) || decoded(pathToken ?? '');
}

/** Keeps the secret in this tab for the way through sign-in (`link`: which kind of link, e.g. "decide"). */
export function keepLinkToken(link: string, token: string): void {
  try {
    sessionStorage.setItem(keptKey(link), token);
  } catch {
    // Storage refused (a private window's quota, say): the person opens the link again after signing in.
  }
}

/** The secret kept in this tab, if any. */
export function keptLinkToken(link: string): string {
  try {
    return sessionStorage.getItem(keptKey(link)) ?? '';
  } catch {
    return '';
  }
}

/** Forgets the kept secret (the link was used, or is in the address again). */
export function forgetLinkToken(link: string): void {
  try {
    sessionStorage.removeItem(keptKey(link));
  } catch {
    // Nothing was kept.
  }
}
