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
