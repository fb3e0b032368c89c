import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createManualClock } from '../src/lib/clock.ts';
import {
  bearer,
  createAccount,
  createApiToken,
  createTestApp,
  drainJobs,
  latestInitToken,
  latestMail,
  type TestApp,
} from './helpers/app.ts';

/**
 * Token writes that overlap an account's recovery or initialisation (found by an audit; each case
 * holds a row from a second connection to force the overlap):
 * - the specification's "Recovery revokes every existing token at once; integrations stop working
 *   immediately": a token rotated or created while a recovery is confirmed must not stay active
 *   after it, and a Master Token rotated meanwhile must not fail the confirmation with a 500 (two
 *   active Master Tokens);
 * - DECISIONS 2 and 7: a registration retried while the client's init is in flight locked the
 *   account then the token, the init the token then the account, and PostgreSQL aborted one as a
 *   deadlock (a 500). Both now take the account's row first (lockAccountTokens in
 *   src/modules/tokens/service.ts).
 */
async function waitingOnLocks(t: TestApp, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await t.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0]!.n >= n) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${n} backends waiting on a lock`);
}

async function recoveryToken(t: TestApp, email: string): Promise<string> {
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email } });
  await drainJobs(t);
  const mail = await latestMail(t, email, 'recovery');
  return new URL(/^Confirm: (\S+)$/m.exec(mail!.text_body)![1]!).searchParams.get('token')!;
}

const confirmRecovery = (t: TestApp, token: string) =>
  t.app.inject({ method: 'POST', url: '/api/v1/auth/recover/confirm', headers: { accept: 'application/json' }, payload: { token } });

/** Confirms two links of the account while its row is held, `first` first in the lock queue; the answers in that order. */
async function confirmInQueue(t: TestApp, email: string, first: string, second: string) {
  const holder = new pg.Client({ connectionString: t.db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM accounts WHERE email = $1 FOR UPDATE', [email]);
    const one = confirmRecovery(t, first);
    await waitingOnLocks(t, 1);
    const two = confirmRecovery(t, second);
    await waitingOnLocks(t, 2);
    await holder.query('ROLLBACK');
    return [await one, await two];
  } finally {
    await holder.end();
  }
}

/** Rotates `ref` and confirms recovery while the token's row is held, rotation first in the lock queue. */
async function rotateDuringRecovery(t: TestApp, master: string, ref: string, recoverToken: string) {
  const holder = new pg.Client({ connectionString: t.db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM api_tokens WHERE token_ref = $1 FOR UPDATE', [ref]);
    const rotate = t.app.inject({ method: 'POST', url: `/api/v1/tokens/${ref}/rotate`, headers: bearer(master) });
    await waitingOnLocks(t, 1);
    const confirm = confirmRecovery(t, recoverToken);
    await waitingOnLocks(t, 2);
    await holder.query('ROLLBACK');
    return { rotate: await rotate, confirm: await confirm };
  } finally {
    await holder.end();
  }
}

test('an API token rotated while the recovery is being confirmed is revoked by the recovery', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const acct = await createAccount(t, 'race-api@example.com');
  const api = await createApiToken(t, acct.master, 'etl');
  const link = await recoveryToken(t, acct.email);

  const { rotate, confirm } = await rotateDuringRecovery(t, acct.master, api.ref, link);
  assert.equal(confirm.statusCode, 200, confirm.body);
  assert.equal(rotate.statusCode, 200, rotate.body);
  const rotated = rotate.json().data.new_token.plaintext as string;

  // After the recovery committed, every token issued before it must be dead.
  const verify = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(rotated) });
  assert.equal(verify.statusCode, 401, `token rotated during the recovery still works after it: ${verify.body}`);
});

test('rotating the Master Token while the recovery is being confirmed does not fail the confirmation with a 500', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const acct = await createAccount(t, 'race-master@example.com');
  const link = await recoveryToken(t, acct.email);

  const { rotate, confirm } = await rotateDuringRecovery(t, acct.master, acct.masterRef, link);
  assert.equal(rotate.statusCode, 200, rotate.body);
  assert.notEqual(confirm.statusCode, 500, `recovery confirmation: ${confirm.statusCode} ${confirm.body}`);
  // Whatever the order, afterwards exactly one Master Token is active and the one rotated in before the recovery is dead.
  const rotated = rotate.json().data.new_token.plaintext as string;
  const verify = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(rotated) });
  assert.equal(verify.statusCode, 401, verify.body);
});

test('a token created with the old Master Token while the recovery is being confirmed is revoked by the recovery', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const acct = await createAccount(t, 'race-create@example.com');
  const api = await createApiToken(t, acct.master, 'etl');
  const link = await recoveryToken(t, acct.email);
  const holder = new pg.Client({ connectionString: t.db.url });
  await holder.connect();
  let created;
  let confirm;
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM api_tokens WHERE token_ref = $1 FOR UPDATE', [api.ref]);
    const confirming = confirmRecovery(t, link);
    await waitingOnLocks(t, 1);
    // The creation waits for the recovery's transaction, then finds its own Master Token revoked.
    const creating = t.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: bearer(acct.master), payload: { name: 'late one' } });
    await waitingOnLocks(t, 2);
    await holder.query('ROLLBACK');
    [confirm, created] = await Promise.all([confirming, creating]);
  } finally {
    await holder.end();
  }
  assert.equal(confirm.statusCode, 200, confirm.body);
  assert.equal(created.statusCode, 401, created.body);
  assert.equal(created.json().error, 'Token revoked');
  const { rows } = await t.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM api_tokens WHERE revoked_at IS NULL AND account_id = (SELECT id FROM accounts WHERE email = $1)`,
    [acct.email],
  );
  assert.equal(rows[0]!.n, 1, 'only the new Master Token is active');
});

test('register again while init runs: neither answers 500', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const email = 'retry@example.com';
  const payload = { email, name: 'Retry Co' };
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload });
  assert.equal(reg.statusCode, 201);
  const token = await latestInitToken(t, email);

  const holder = new pg.Client({ connectionString: t.db.url });
  await holder.connect();
  let init;
  let again;
  try {
    // Hold the token's row for a moment, as any in-flight statement on it would.
    await holder.query('BEGIN');
    await holder.query(`SELECT id FROM one_time_tokens WHERE purpose = 'init' FOR UPDATE`);
    const initing = t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token } });
    await waitingOnLocks(t, 1);
    const registering = t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload });
    await waitingOnLocks(t, 2);
    await holder.query('ROLLBACK');
    [init, again] = await Promise.all([initing, registering]);
  } finally {
    await holder.end();
  }
  assert.notEqual(
    init.statusCode,
    500,
    `init: ${init.statusCode} ${init.body}; logged: ${t.logLines
      .filter((l) => l.includes('unhandled error'))
      .map((l) => JSON.parse(l).err?.message)
      .join(' | ')}`,
  );
  const cause = t.logLines.filter((l) => l.includes('unhandled error')).map((l) => JSON.parse(l).err?.message);
  assert.notEqual(again.statusCode, 500, `register: ${again.statusCode} ${again.body}; logged: ${cause.join(' | ')}`);
});

test('two recovery links confirmed at once by processes whose clocks disagree: the later in the queue still loses', async () => {
  // Each reading of this clock, once stepping, is a second earlier than the one before: the
  // confirmation that takes the account's lock second reads an earlier time than the winner's
  // (another process with its clock behind), so its link, ended "at" the winner's time, would
  // still look unexpired to it. Failed before the claim checked for the ending outright.
  let stepping = false;
  let last = Date.now();
  const clock = {
    now: () => {
      last = stepping ? last - 1000 : Date.now();
      return new Date(last);
    },
  };
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' }, clock });
  const acct = await createAccount(t, 'race-clocks@example.com');
  const first = await recoveryToken(t, acct.email);
  const second = await recoveryToken(t, acct.email);
  stepping = true;
  const answers = await confirmInQueue(t, acct.email, first, second).finally(() => {
    stepping = false;
  });
  assert.deepEqual(
    answers.map((a) => a.statusCode),
    [200, 422],
    answers.map((a) => a.body).join(' | '),
  );
  assert.match(answers[1]!.body, /recovered with another link since/);
  const tokens = await t.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM api_tokens t JOIN accounts a ON a.id = t.account_id
      WHERE a.email = $1 AND t.kind = 'master' AND t.revoked_at IS NULL`,
    [acct.email],
  );
  assert.equal(tokens.rows[0]!.n, 1, 'one working Master Token');
});

test("a recovery link near its expiry is ended by another link's use even when the winner's clock reads it expired", async () => {
  // The winner's process reads a time just past the older link's expiry, the loser's (its clock
  // two seconds behind) one just before it: the link must not be left to the loser's clock.
  // Failed while the ending skipped the links the winner's clock saw as expired.
  const t0 = Date.parse('2026-11-21T10:00:00Z');
  const clock = createManualClock(new Date(t0));
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' }, clock });
  const acct = await createAccount(t, 'race-expiry@example.com');
  const older = await recoveryToken(t, acct.email);
  clock.advance(3600_000);
  const newer = await recoveryToken(t, acct.email);
  clock.set(new Date(t0 + 24 * 3600_000 + 1000));
  const won = await confirmRecovery(t, newer);
  assert.equal(won.statusCode, 200, won.body);
  clock.set(new Date(t0 + 24 * 3600_000 - 1000));
  const late = await confirmRecovery(t, older);
  assert.equal(late.statusCode, 422, late.body);
  assert.match(late.body, /recovered with another link since/);
  const verify = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(won.json().master_token as string) });
  assert.equal(verify.statusCode, 200, 'the Master Token the winner showed works');
});

test('two recovery links of one account confirmed at once: one recovers, the other says the account was recovered with another link', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const acct = await createAccount(t, 'race-links@example.com');
  const first = await recoveryToken(t, acct.email);
  const second = await recoveryToken(t, acct.email);
  assert.notEqual(first, second);
  const answers = await confirmInQueue(t, acct.email, first, second);
  assert.deepEqual(
    answers.map((a) => a.statusCode),
    [200, 422],
    answers.map((a) => a.body).join(' | '),
  );
  assert.match(answers[1]!.body, /recovered with another link since/);
  const master = answers[0]!.json().master_token as string;
  const verify = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(master) });
  assert.equal(verify.statusCode, 200, 'the Master Token the winner showed works');
});

test('a recovery asked for before the account was recovered, its job late, sends no link that would undo that recovery', async () => {
  const t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const acct = await createAccount(t, 'race-late-job@example.com');
  const first = await recoveryToken(t, acct.email);
  // Asked again; its job has not run yet when the first link is confirmed.
  await t.app.inject({ method: 'POST', url: '/api/v1/auth/recover', payload: { email: acct.email } });
  await new Promise((r) => setTimeout(r, 5)); // the confirmation a moment later: a request in its very millisecond still gets a link
  const confirmed = await confirmRecovery(t, first);
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  await drainJobs(t);
  const mails = await t.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM mail_outbox WHERE to_address = $1 AND kind = 'recovery'`,
    [acct.email],
  );
  assert.equal(mails.rows[0]!.n, 1, 'only the first link was mailed');
  const open = await t.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM one_time_tokens o JOIN accounts a ON a.id = o.account_id
      WHERE a.email = $1 AND o.purpose = 'recover' AND o.used_at IS NULL AND o.expires_at > now()`,
    [acct.email],
  );
  assert.equal(open.rows[0]!.n, 0, 'no recovery link works');
  // A recovery asked for after it mails a link as ever.
  await recoveryToken(t, acct.email);
  const verify = await t.app.inject({ method: 'POST', url: '/api/v1/tokens/verify', headers: bearer(confirmed.json().master_token) });
  assert.equal(verify.statusCode, 200, 'the recovered Master Token still works');
});
