import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from './helpers/net.ts';
import { createManualClock, createTestApp, drainJobs, startTestWorker } from './helpers/app.ts';
import { startSmtp } from './helpers/smtp.ts';
import { waitFor } from './helpers/wait.ts';
import { requeueUnsentMail } from '../src/modules/mail/jobs.ts';
import { SENT_SECRET_NOTE } from '../src/modules/mail/outbox.ts';

test('registration mail arrives at a real SMTP server with the initialization token line', async () => {
  const smtp = await startSmtp();
  const t = await createTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: 'regwatch <hello@regwatch.test>' } });
  await startTestWorker(t);
  const reg = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { email: 'smtp-user@example.com', name: 'Smtp User' },
  });
  assert.equal(reg.statusCode, 201);
  const mail = await smtp.waitFor((m) => m.subject?.includes('initialization') ?? false);
  assert.equal(mail.from?.value[0].address, 'hello@regwatch.test');
  assert.equal((mail.to as { value: { address: string }[] }).value[0].address, 'smtp-user@example.com');
  const token = /^Initialization token: (\S+)$/m.exec(mail.text ?? '')?.[1];
  assert.ok(token, mail.text);
  assert.match(mail.text ?? '', /Expires: /);
  // The mailed token really works.
  const init = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token } });
  assert.equal(init.statusCode, 200);

  // Recovery: a "Confirm: <link>" line starting with PUBLIC_BASE_URL.
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: 'smtp-user@example.com' } });
  const rec = await smtp.waitFor((m) => m.subject?.includes('Recover') ?? false);
  assert.match(
    rec.text ?? '',
    new RegExp(`^Confirm: ${t.config.publicBaseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/api/v1/auth/recover/confirm\\?token=\\S+$`, 'm'),
  );
  const row = await t.db.db.selectFrom('mail_outbox').selectAll().where('kind', '=', 'registration').executeTakeFirstOrThrow();
  assert.ok(row.sent_at);
  // Delivered, a mail that held a one-time token keeps none of it: the database holds hashes only.
  const recoveryRow = () => t.db.db.selectFrom('mail_outbox').selectAll().where('kind', '=', 'recovery').executeTakeFirstOrThrow();
  // The SMTP server has it; the job records the delivery just after.
  await waitFor('the recovery mail recorded as sent', async () => (await recoveryRow()).sent_at !== null);
  const recovery = await recoveryRow();
  for (const r of [row, recovery]) {
    assert.equal(r.text_body, SENT_SECRET_NOTE);
    assert.equal(r.html_body, null);
  }
  assert.ok(!JSON.stringify(await t.db.db.selectFrom('mail_outbox').selectAll().execute()).includes(token!));
});

test('a worker that starts while a mail is being sent does not send it again', async () => {
  // An SMTP server that holds the message 1.5 s before accepting it.
  const smtp = await startSmtp(0, { dataDelayMs: 1500 });
  const t = await createTestApp({ env: { SMTP_URL: smtp.url } });
  await startTestWorker(t);
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'slow@example.com', name: 'Slow Smtp' } });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const row = await t.db.db.selectFrom('mail_outbox').select('attempts').executeTakeFirstOrThrow();
    if (row.attempts > 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // What a second worker process does at its start, while the first is in the middle of sending.
  assert.equal(await requeueUnsentMail(t.db.db), 0);
  await smtp.waitFor((m) => m.subject?.includes('initialization') ?? false);
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(smtp.messages.length, 1);
});

test('a mail queued while the SMTP server is down is delivered once it is back, exactly once', async () => {
  const port = await freePort();
  const t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  await startTestWorker(t);
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'down@example.com', name: 'Down' } });
  assert.equal(reg.statusCode, 201);
  // Wait for the first attempt to fail.
  const deadline = Date.now() + 10_000;
  let row;
  do {
    await new Promise((r) => setTimeout(r, 200));
    row = await t.db.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow();
  } while (!row.last_error && Date.now() < deadline);
  assert.ok(row.last_error, 'the first attempt failed');
  assert.equal(row.sent_at, null);

  const smtp = await startSmtp(port);
  const mail = await smtp.waitFor((m) => m.subject?.includes('initialization') ?? false, 30_000);
  assert.match(mail.text ?? '', /^Initialization token: \S+$/m);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(smtp.messages.length, 1, 'delivered exactly once');
  const sent = await t.db.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow();
  assert.ok(sent.sent_at);
  assert.ok(sent.attempts >= 2);
});

test('without SMTP_URL mail stays in the outbox and is printed to the log', async () => {
  const t = await createTestApp();
  const lines: string[] = [];
  const pino = (await import('pino')).default;
  await startTestWorker(
    t,
    pino(
      { level: 'info' },
      {
        write: (s: string) => {
          lines.push(s);
        },
      },
    ),
  );
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'nosmtp@example.com', name: 'No Smtp' } });
  const deadline = Date.now() + 10_000;
  while (!lines.some((l) => l.includes('Initialization token:')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok(
    lines.some((l) => l.includes('Initialization token:')),
    'printed to the log',
  );
  const row = await t.db.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow();
  assert.equal(row.sent_at, null);
});

test('a mail whose one-time token expired before any SMTP server took it is not sent, nor queued again', async () => {
  const port = await freePort();
  const clock = createManualClock('2026-11-21T10:00:00Z');
  const t = await createTestApp({ clock, env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'late@example.com', name: 'Late' } });
  assert.equal(reg.statusCode, 201);
  const queued = await t.db.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow();
  assert.equal(queued.send_before?.toISOString(), '2026-11-22T10:00:00.000Z', "the token's expiry");
  // The SMTP server comes back a day and a second later.
  clock.advance(24 * 3600 * 1000 + 1000);
  const smtp = await startSmtp(port);
  await drainJobs(t);
  const row = await t.db.db.selectFrom('mail_outbox').selectAll().executeTakeFirstOrThrow();
  assert.equal(smtp.messages.length, 0, 'not sent');
  assert.equal(row.sent_at, null);
  assert.match(row.last_error ?? '', /expired before it could be delivered/);
  assert.equal(row.text_body, SENT_SECRET_NOTE, 'the dead token is struck too');
  assert.equal(await requeueUnsentMail(t.db.db), 0, 'a worker start does not queue it again');
});
