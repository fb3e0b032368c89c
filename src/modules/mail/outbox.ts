import type { DbOrTrx } from '../../db/database.ts';
import { addJob } from '../../jobs/queue.ts';
import { TASKS } from '../../jobs/tasks.ts';

export interface OutgoingMail {
  kind: 'registration' | 'recovery' | 'watchlist' | string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  /**
   * The body carries a one-time token that works until then: the outbox keeps the body only until
   * the mail is delivered, and a mail not delivered by then is not sent.
   */
  secretExpiresAt?: Date;
}

export const SEND_MAIL_TASK = TASKS.sendMail;

/** What a delivered mail that held a one-time token keeps of its body (migration 20261202000200). */
export const SENT_SECRET_NOTE = '(removed after delivery: this mail held a one-time token)';

/**
 * Mail is durable before it is sent: the row and its sending job commit with the transaction
 * that caused the mail, and the job (retried with backoff) delivers it. An SMTP server that is
 * down delays mail; it loses none.
 */
export async function enqueueMail(trx: DbOrTrx, mail: OutgoingMail): Promise<string> {
  const row = await trx
    .insertInto('mail_outbox')
    .values({
      kind: mail.kind,
      to_address: mail.to,
      subject: mail.subject,
      text_body: mail.text,
      html_body: mail.html ?? null,
      holds_secret: mail.secretExpiresAt !== undefined,
      send_before: mail.secretExpiresAt ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await addJob(trx, SEND_MAIL_TASK, { id: row.id }, { jobKey: `mail:${row.id}`, maxAttempts: 25 });
  return row.id;
}
