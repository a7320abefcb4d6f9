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
