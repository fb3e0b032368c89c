import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { sql } from 'kysely';
import { auditWallets } from '../src/modules/wallet/audit.ts';
import { runWalletAudit, walletCommand } from '../src/modules/wallet/commands.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { bearer, createAccount, createTestApp, testConfig, type TestApp } from './helpers/app.ts';

async function idOf(t: TestApp, userRef: string) {
  return (await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', userRef).executeTakeFirstOrThrow()).id;
}

/** Two accounts with every kind of ledger row: start, deposit (a paid dev checkout), usage, refund. */
async function busyLedger() {
  const t = await createTestApp();
  const a = await createAccount(t);
  const b = await createAccount(t);
  const topup = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/topup',
    headers: bearer(a.master),
    payload: { package_slug: 'credits-1000' },
  });
  await t.app.inject({ method: 'POST', url: new URL(topup.json().data.checkout_url).pathname, payload: { action: 'pay' } });
  const idA = await idOf(t, a.userRef);
  const idB = await idOf(t, b.userRef);
  await applyLedgerEntry(t.db.db, { accountId: idA, type: 'usage', amount: -3, description: 'companies.add' });
  await applyLedgerEntry(t.db.db, {
    accountId: idA,
    type: 'refund',
    amount: 1,
    description: 'companies.add refund',
    reference: 'refund:1',
  });
  await applyLedgerEntry(t.db.db, { accountId: idB, type: 'usage', amount: -100, description: 'companies.search' });
  return { t, a, b, idA, idB };
}

function capture() {
  const lines: string[] = [];
  return {
    lines,
    out: (l: string) => {
      lines.push(l);
    },
  };
}

test('a consistent ledger audits clean: exit 0', async () => {
  const { t } = await busyLedger();
  const report = await auditWallets(t.db.db);
  assert.deepEqual(report.findings, []);
  assert.equal(report.wallets, 2);
  assert.equal(report.transactions, 6);
  const c = capture();
  assert.equal(await runWalletAudit(t.db.db, c.out), 0);
  assert.deepEqual(c.lines, ['Audited 2 wallet(s) and 6 transaction(s): every ledger matches its balance.']);
});

test('a balance that disagrees with its ledger is reported with the account: exit 1', async () => {
  const { t, a, idA } = await busyLedger();
  // A change of the balance without its ledger row: what the ledger exists to prevent.
  await t.db.db
    .updateTable('wallets')
    .set({ balance: sql`balance + 5` })
    .where('account_id', '=', idA)
    .execute();
  const c = capture();
  assert.equal(await runWalletAudit(t.db.db, c.out), 1);
  assert.ok(
    c.lines.some((l) => l === `MISMATCH account ${a.userRef} (id ${idA}): balance 1103 but the ledger sums to 1098`),
    c.lines.join('\n'),
  );
  assert.ok(c.lines.some((l) => l.includes('the last balance_after is 1098')));
  assert.match(c.lines.at(-1)!, /2 mismatches\.$/);
});

test('a broken balance_after chain, a purchase total and a payment without its deposit are reported', async () => {
  const { t, b, idB, idA } = await busyLedger();
  // A row whose balance_after does not follow from the one before it (the wallet agrees with it).
  await sql`INSERT INTO wallet_transactions (account_id, type, amount, balance_after, description) VALUES (${idB}, 'refund', 5, 7, 'hand-made')`.execute(
    t.db.db,
  );
  await t.db.db.updateTable('wallets').set({ balance: 7 }).where('account_id', '=', idB).execute();
  await t.db.db.updateTable('wallets').set({ total_purchased: 2000 }).where('account_id', '=', idA).execute();
  await t.db.db
    .insertInto('payments')
    .values({
      payment_ref: 'pay_lost',
      account_id: idA,
      provider: 'dev',
      package_slug: 'credits-1000',
      credits: 1000,
      amount: 4900,
      currency: 'pln',
      status: 'confirmed',
      expires_at: new Date(),
      completed_at: new Date(),
    })
    .execute();
  const { findings } = await auditWallets(t.db.db);
  const problems = findings.map((f) => f.problem);
  assert.ok(
    problems.some((p) => /^transaction \d+: balance_after 7 but the previous 0 plus amount 5 is 5$/.test(p)),
    problems.join('\n'),
  );
  assert.ok(findings.some((f) => f.userRef === b.userRef && /ledger sums to 5/.test(f.problem)));
  assert.ok(problems.includes('total_purchased 2000 but deposits sum to 1000'));
  assert.ok(problems.includes('confirmed payment pay_lost has 0 deposits (expected 1)'));
});

test('the ledger is append-only: rows cannot be changed or deleted, except with their account', async () => {
  const { t, idA } = await busyLedger();
  await assert.rejects(
    t.db.db.updateTable('wallet_transactions').set({ amount: 0 }).where('account_id', '=', idA).execute(),
    /append-only/,
  );
  await assert.rejects(t.db.db.deleteFrom('wallet_transactions').where('account_id', '=', idA).execute(), /append-only/);
  await assert.rejects(t.db.db.updateTable('wallets').set({ balance: -1 }).where('account_id', '=', idA).execute(), /check constraint/);
  await t.db.db.deleteFrom('accounts').where('id', '=', idA).execute();
  assert.equal((await t.db.db.selectFrom('wallet_transactions').select('id').where('account_id', '=', idA).execute()).length, 0);
  assert.deepEqual((await auditWallets(t.db.db)).findings, []);
});

test('walletCommand opens the configured database and exits 0 clean, 1 on a mismatch, 2 on bad arguments', async () => {
  const { t, idA } = await busyLedger();
  const config = testConfig({ DATABASE_URL: t.db.url });
  const c = capture();
  assert.equal(await walletCommand({ config, argv: ['audit'], out: c.out }), 0);
  assert.match(c.lines.at(-1)!, /every ledger matches/);
  await t.db.db.updateTable('wallets').set({ balance: 0 }).where('account_id', '=', idA).execute();
  assert.equal(await walletCommand({ config, argv: ['audit'], out: c.out }), 1);
  assert.equal(await walletCommand({ config, argv: [] }), 2);
  assert.equal(await walletCommand({ config, argv: ['audit', '--fix'] }), 2);
});

test('`regwatch wallet audit` as an operator runs it: output and exit status', async () => {
  const { t, a, idA } = await busyLedger();
  const run = () =>
    new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['bin/regwatch.js', 'wallet', 'audit'], {
        env: { ...process.env, DATABASE_URL: t.db.url, REGISTRY_SOURCES: '', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
      });
      child.on('error', reject);
      child.on('exit', (code) => resolve({ code, stdout }));
    });
  const clean = await run();
  assert.equal(clean.code, 0, clean.stdout);
  assert.match(clean.stdout, /Audited 2 wallet\(s\) and 6 transaction\(s\): every ledger matches its balance\./);
  await t.db.db
    .updateTable('wallets')
    .set({ balance: sql`balance - 1` })
    .where('account_id', '=', idA)
    .execute();
  const dirty = await run();
  assert.equal(dirty.code, 1);
  assert.match(dirty.stdout, new RegExp(`MISMATCH account ${a.userRef} \\(id ${idA}\\): balance 1097 but the ledger sums to 1098`));
});
