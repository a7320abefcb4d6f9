import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** An email as it arrived: its recipients and its raw text (headers, and the body as sent). */
export interface Mail {
  to: string[];
  raw: string;
}

/** A local SMTP server that keeps what the service sends, as a developer's mail catcher would. */
export interface MailCatcher {
  /** The SMTP URL to hand the service (`SMTP_URL`). */
  url: string;
  mails: Mail[];
  /** The mail to `address` whose text has `marker`, once it came (10 s at most, unless told). */
  mailTo(address: string, marker: string, waitMs?: number): Promise<Mail>;
  close(): Promise<void>;
}

/** Quoted-printable's soft line breaks undone, for reading a link whole. */
export const unfolded = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');

/** The links in a mail's text that start with `base` (the service's public URL), in order. */
export function linksIn(mail: Mail, base: string): string[] {
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return unfolded(mail.raw).match(new RegExp(`${escaped}[^\\s<>"|]*`, 'g')) ?? [];
}

/** Bytes written as =XX (quoted-printable, and the Q encoding of headers). */
const quotedBytes = (text: string) => Buffer.from(text.replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');

/** A header's encoded words (RFC 2047) as text: adjacent ones joined as bytes first (a character may span two). */
const decodedHeader = (value: string) =>
  value.replace(/=\?utf-8\?[QB]\?[^?]*\?=(\s*=\?utf-8\?[QB]\?[^?]*\?=)*/gi, (run) =>
    Buffer.concat(
      [...run.matchAll(/=\?utf-8\?([QB])\?([^?]*)\?=/gi)].map(([, encoding, word]) =>
        encoding!.toUpperCase() === 'B' ? Buffer.from(word!, 'base64') : quotedBytes(word!.replace(/_/g, ' ')),
      ),
    ).toString('utf8'),
  );

/**
 * A single-part text mail as its reader sees it: the subject with its encoded words decoded, and the body undone
 * of its transfer encoding (quoted-printable or base64).
 */
export function readMail(mail: Mail): { subject: string; text: string } {
  const split = mail.raw.indexOf('\r\n\r\n');
  const headers = mail.raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = mail.raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(headers)?.[1] ?? '';
  const subject = decodedHeader(header('Subject'));
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? quotedBytes(body.replace(/=\r?\n/g, '')).toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
        : body;
  return { subject, text: text.replace(/\r\n/g, '\n') };
}

export async function startMailCatcher(): Promise<MailCatcher> {
  const mails: Mail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((rcpt) => rcpt.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    mails,
    async mailTo(address, marker, waitMs = 10_000) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const found = mails.find((mail) => mail.to.includes(address) && unfolded(mail.raw).includes(marker));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no mail to ${address} with ${marker}; got ${mails.map((m) => m.to.join(',')).join(' | ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
