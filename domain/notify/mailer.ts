import nodemailer from 'nodemailer';

export interface Email {
  to: string;
  subject: string;
  text: string;
}

/** Sends email through the operator's SMTP server (SMTP_URL). */
export interface Mailer {
  send(email: Email): Promise<void>;
  close(): void;
}

/**
 * Why an email was not sent, in words for the person who asked (an owner or admin), without the server's address
 * or reply text: those go to the operator's log.
 */
export function mailFailureInWords(error: unknown): string {
  const { code, responseCode } = (error ?? {}) as { code?: string; responseCode?: number };
  if (code === 'EAUTH' || code === 'ENOAUTH') return "the mail server refused Gatehouse's sign-in (the operator's SMTP_URL)";
  if (code === 'EENVELOPE') return `the mail server refused the address${responseCode ? ` (SMTP ${responseCode})` : ''}`;
  if (code === 'ETIMEDOUT') return 'the mail server did not answer in time';
  if (code === 'ECONNECTION' || code === 'ESOCKET' || code === 'EDNS' || code === 'ETLS' || code === 'EPROXY') return 'the mail server could not be reached';
  return `the mail server did not take it${responseCode ? ` (SMTP ${responseCode})` : ''}`;
}

/**
 * A mailer for `smtp://user:password@host:587` (STARTTLS when the server offers it) or `smtps://…:465`, as
 * nodemailer reads such URLs; `from` is the sender people see. `timeoutMs` bounds connecting, the greeting and
 * each silence of the server (nodemailer's own defaults wait minutes: right for the worker, which retries, not for
 * a person waiting on the api's answer).
 */
export function smtpMailer(url: string, from: string, { timeoutMs }: { timeoutMs?: number } = {}): Mailer {
  const transport = nodemailer.createTransport(
    timeoutMs === undefined ? url : { url, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs },
  );
  return {
    async send(email) {
      await transport.sendMail({ from, to: email.to, subject: email.subject, text: email.text });
    },
    close: () => transport.close(),
  };
}
