/** Shared by the test/watchlist-*.test.ts files: registry days written as NDJSON, and ledger reads. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.ts';
import { runDaily, type DailyRunSummary } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { companySnapshot, writeNdjson, type CompanySpec } from './helpers/registry.ts';
import type { TestApp } from './helpers/app.ts';
import { defer } from './helpers/cleanup.ts';

const dir = mkdtempSync(join(tmpdir(), 'regwatch-watchlist-'));
defer(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** Runs `regwatch daily` for `date` over a file holding these companies (as the CLI would). */
export async function runDay(db: Db, date: string, specs: readonly CompanySpec[]): Promise<DailyRunSummary> {
  const file = writeNdjson(join(dir, `day-${date}-${++files}.ndjson`), specs.map(companySnapshot));
  return runDaily(db, { date, source: createFileSource(file), sourceKey: `file:${file}` });
}

export async function accountIdOf(t: { db: { db: Db } }, userRef: string): Promise<string> {
  return (await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', userRef).executeTakeFirstOrThrow()).id;
}

export interface LedgerRow {
  type: string;
  amount: number;
  description: string;
  reference: string | null;
}

/** The account's ledger after the welcome credits, oldest first. */
export async function ledger(t: { db: { db: Db } }, accountId: string): Promise<LedgerRow[]> {
  const { rows } = await sql<LedgerRow>`
    SELECT type, amount::int AS amount, description, reference FROM wallet_transactions
    WHERE account_id = ${accountId} AND type <> 'start' ORDER BY id`.execute(t.db.db);
  return rows;
}

export async function balance(t: TestApp, token: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/wallet', headers: { authorization: `Bearer ${token}` } });
  return res.json().data.balance;
}

export async function setBalance(t: { db: { db: Db } }, accountId: string, credits: number): Promise<void> {
  // A usage or refund row keeps the ledger consistent with the balance (the audit checks it).
  const { rows } = await sql<{ balance: string }>`SELECT balance FROM wallets WHERE account_id = ${accountId}`.execute(t.db.db);
  const delta = credits - Number(rows[0]!.balance);
  if (delta === 0) return;
  const { applyLedgerEntry } = await import('../src/modules/wallet/ledger.ts');
  await applyLedgerEntry(t.db.db, { accountId, type: delta < 0 ? 'usage' : 'refund', amount: delta, description: 'test: set balance' });
}

/** The per-day counters agree with the feed rows they count, for every account. */
export async function feedCountMismatches(db: Db): Promise<unknown[]> {
  const { rows } = await sql`
    SELECT coalesce(c.account_id, f.account_id) AS account_id, coalesce(c.event_date, f.event_date)::text AS event_date,
           coalesce(c.event_type, f.event_type) AS event_type, c.n AS counted, f.n AS rows
    FROM watchlist_feed_counts c
    FULL JOIN (SELECT account_id, event_date, event_type, count(*)::int AS n FROM watchlist_feed GROUP BY 1, 2, 3) f
      ON f.account_id = c.account_id AND f.event_date = c.event_date AND f.event_type = c.event_type
    WHERE c.n IS DISTINCT FROM f.n`.execute(db);
  return rows;
}
