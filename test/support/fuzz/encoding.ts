// Percent-encoding for any JavaScript string, lone surrogates included (encodeURIComponent throws on them): the
// UTF-8 bytes a client would send, every byte outside the unreserved set escaped.

const unreserved = /[A-Za-z0-9\-._~]/;

export function percentEncode(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += byte < 0x80 && unreserved.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** A query string from name and value pairs, in order, repeats kept. */
export function queryString(pairs: readonly (readonly [string, string])[]): string {
  return pairs.length ? `?${pairs.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`).join('&')}` : '';
}

/** What a header can carry on the wire as a client sends it: visible ASCII and spaces. */
export function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '').trim();
}
