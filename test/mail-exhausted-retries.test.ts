import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { addJob } from '../src/jobs/queue.ts';
import { TASKS } from '../src/jobs/tasks.ts';
import { enqueueMail } from '../src/modules/mail/outbox.ts';
import { requeueUnsentMail } from '../src/modules/mail/jobs.ts';
import { createTestApp, drainJobs, drainQueues, type TestApp } from './helpers/app.ts';
import { freePort } from './helpers/net.ts';
import { startSmtp } from './helpers/smtp.ts';

/**
 * Mail is never lost (DECISIONS 1; src/modules/mail/outbox.ts): a mail whose SMTP server was down
 * or refusing for every one of its job's 25 attempts (about 4 days of graphile-worker's backoff)
 * is sent once the server is back, by the hourly `mail:requeue` job or a worker's start, and only
 * once. (Found by an audit: the exhausted job stayed in the queue, so neither requeued the mail.)
 */

/** A mail without a one-time token (a watchlist confirmation), its job's every attempt spent against a closed port. */
async function exhaustedMail(): Promise<{ t: TestApp; id: string; port: number }> {
  const port = await freePort();
  const t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  const id = await enqueueMail(t.db.db, {
    kind: 'watchlist',
    to: 'ops@example.com',
    subject: 'Watchlist confirmation',
    text: 'Now watched: 1',
  });
  for (let i = 0; i < 60; i++) {
    // Each backoff waited out at once.
    const { rows } = await sql<{ left: number }>`
      UPDATE graphile_worker._private_jobs SET run_at = now() WHERE key = ${`mail:${id}`} RETURNING max_attempts - attempts AS left`.execute(
      t.db.db,
    );
    if (rows[0]!.left <= 0) break;
    await drainJobs(t);
  }
  const job = await sql<{ attempts: number; max_attempts: number }>`
    SELECT attempts, max_attempts FROM graphile_worker.jobs WHERE key = ${`mail:${id}`}`.execute(t.db.db);
  assert.equal(job.rows[0]!.attempts, 25, 'every attempt of the job was spent');
  assert.equal(job.rows[0]!.max_attempts, 25);
  const row = await t.db.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  assert.equal(row.sent_at, null);
  assert.ok(row.last_error);
  return { t, id, port };
}

async function sentAt(t: TestApp, id: string): Promise<Date | null> {
  return (await t.db.db.selectFrom('mail_outbox').select('sent_at').where('id', '=', id).executeTakeFirstOrThrow()).sent_at;
}

test('the hourly mail:requeue job sends a mail whose every attempt failed, once the SMTP server is back', async () => {
  const { t, id, port } = await exhaustedMail();
  const smtp = await startSmtp(port);
  await addJob(t.db.db, TASKS.requeueMail, {});
  await drainQueues(t);
  assert.equal(smtp.messages.length, 1);
  assert.ok(await sentAt(t, id));
  // Sent: the next hour's pass queues nothing, and nothing goes out twice.
  await addJob(t.db.db, TASKS.requeueMail, {});
  await drainQueues(t);
  assert.equal(smtp.messages.length, 1);
});

test("a worker's start (requeueUnsentMail) sends it too; a mail whose job still has attempts left is not queued twice", async () => {
  const { t, id, port } = await exhaustedMail();
  const waiting = await enqueueMail(t.db.db, {
    kind: 'watchlist',
    to: 'dev@example.com',
    subject: 'Watchlist confirmation',
    text: 'Now watched: 2',
  });
  const smtp = await startSmtp(port);
  assert.equal(await requeueUnsentMail(t.db.db), 1, 'only the mail whose job spent its attempts');
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE key = ${`mail:${waiting}`}`.execute(
    t.db.db,
  );
  assert.equal(rows[0]!.n, 1);
  await drainQueues(t);
  const to = smtp.messages.map((m) => (Array.isArray(m.to) ? m.to : [m.to]).map((a) => a?.text).join());
  assert.deepEqual(to.sort(), ['dev@example.com', 'ops@example.com']);
  assert.ok(await sentAt(t, id));
});

test('the crontab schedules mail:requeue only where SMTP is configured', async () => {
  const { compose } = await import('../src/composition.ts');
  const { default: pino } = await import('pino');
  const withSmtp = await createTestApp({ env: { SMTP_URL: 'smtp://127.0.0.1:1' } });
  const without = await createTestApp({});
  const crontabOf = (t: TestApp) => {
    const parts = compose({ config: t.config, db: t.db.db, logger: pino({ level: 'silent' }), clock: t.clock });
    return parts.jobs.flatMap((m) => m.crontab ?? []).filter((line) => line.includes(TASKS.requeueMail));
  };
  assert.equal(crontabOf(withSmtp).length, 1);
  assert.equal(crontabOf(without).length, 0);
});
