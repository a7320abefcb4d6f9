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
 * nodemailer reads such URLs; `from` is the sender people see.
 */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(email) {
      await transport.sendMail({ from, to: email.to, subject: email.subject, text: email.text });
    },
    close: () => transport.close(),
  };
}
