import type { Task } from 'graphile-worker';
import { sql } from 'kysely';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { addJob, type JobModule } from '../../jobs/queue.ts';
import { parseJobPayload } from '../../jobs/payload.ts';
import { SendMailPayload, TASKS } from '../../jobs/tasks.ts';
import { SEND_MAIL_TASK, SENT_SECRET_NOTE } from './outbox.ts';

export interface MailDeps {
  db: Db;
  logger: Logger;
  clock: Clock;
  /** Null without SMTP_URL: mail stays in the outbox and is printed to the log. */
  transport: Transporter | null;
  mailFrom: string;
}

export function createMailTransport(smtpUrl: string): Transporter {
  return nodemailer.createTransport(smtpUrl, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
}

const EXPIRED_UNSENT = 'not sent: the one-time token it carries expired before it could be delivered';

/**
 * `mail.send {id}`: safe to run twice (a sent row is skipped). Without SMTP_URL the mail stays
 * in the outbox and is printed to the log; when SMTP is configured later, the worker's start
 * queues every unsent mail again (see `requeueUnsentMail`).
 */
export function createMailJobs(deps: MailDeps): JobModule {
  const { transport } = deps;
  const send: Task = async (payload) => {
    const { id } = parseJobPayload(SEND_MAIL_TASK, SendMailPayload, payload);
    const mail = await deps.db.selectFrom('mail_outbox').selectAll().where('id', '=', String(id)).executeTakeFirst();
    if (!mail || mail.sent_at) return;
    // What the row keeps of a one-time token's mail once it is sent, or will never be.
    const struck = mail.holds_secret ? { text_body: SENT_SECRET_NOTE, html_body: null } : {};
    if (mail.send_before && mail.send_before <= deps.clock.now()) {
      await deps.db
        .updateTable('mail_outbox')
        .set({ last_error: EXPIRED_UNSENT, ...struck })
        .where('id', '=', mail.id)
        .execute();
      deps.logger.warn({ mail: { id: mail.id, kind: mail.kind, to: mail.to_address } }, EXPIRED_UNSENT);
      return;
    }
    if (!transport) {
      deps.logger.info(
        { mail: { id: mail.id, kind: mail.kind, to: mail.to_address, subject: mail.subject }, text: mail.text_body },
        'mail kept in the outbox (SMTP_URL is not set)',
      );
      return;
    }
    await deps.db
      .updateTable('mail_outbox')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', mail.id)
      .execute();
    try {
      const info = await transport.sendMail({
        from: deps.mailFrom,
        to: mail.to_address,
        subject: mail.subject,
        text: mail.text_body,
        html: mail.html_body ?? undefined,
        // A stable Message-ID lets receiving systems drop a duplicate if a crash between sending
        // and recording makes the job run again.
        messageId: `<outbox-${mail.id}@regwatch>`,
      });
      await deps.db
        .updateTable('mail_outbox')
        .set({
          sent_at: deps.clock.now(),
          message_id: info.messageId ?? null,
          last_error: null,
          ...struck,
        })
        .where('id', '=', mail.id)
        .execute();
    } catch (e) {
      await deps.db
        .updateTable('mail_outbox')
        .set({ last_error: e instanceof Error ? e.message.slice(0, 500) : String(e) })
        .where('id', '=', mail.id)
        .execute();
      throw e;
    }
  };
  if (!transport) return { tasks: { [SEND_MAIL_TASK]: send } };
  // Hourly, a mail whose job spent every attempt (an SMTP server down or refusing for the ~4 days
  // of graphile-worker's 25 attempts) gets its job back, so a fixed server sends it without a restart.
  const requeue: Task = async () => {
    const n = await requeueUnsentMail(deps.db);
    if (n > 0) deps.logger.info({ count: n }, 'queued unsent mail from the outbox again');
  };
  return {
    tasks: { [SEND_MAIL_TASK]: send, [TASKS.requeueMail]: requeue },
    crontab: [`17 * * * * ${TASKS.requeueMail} ?max=1&jobKey=${TASKS.requeueMail}&jobKeyMode=preserve_run_at`],
  };
}

/**
 * Queues a send job for every unsent mail that is still worth sending (its one-time token, if
 * any, works yet) and has no job, or only one that spent all its attempts: add_job with that key
 * starts it again from its first attempt. A mail whose job is waiting or running is left alone:
 * add_job with the key of a job a worker is running makes a second job, which sent the mail again
 * beside the first.
 */
export async function requeueUnsentMail(db: Db): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    SELECT m.id FROM mail_outbox m
    WHERE m.sent_at IS NULL AND (m.send_before IS NULL OR m.send_before > now())
      AND NOT EXISTS (
        SELECT 1 FROM graphile_worker.jobs j
        WHERE j.key = 'mail:' || m.id AND (j.attempts < j.max_attempts OR j.locked_at IS NOT NULL))
    ORDER BY m.id`.execute(db);
  for (const r of rows)
    await addJob(db, SEND_MAIL_TASK, { id: r.id }, { jobKey: `mail:${r.id}`, jobKeyMode: 'preserve_run_at', maxAttempts: 25 });
  return rows.length;
}
