import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';

test('the template database is migrated, with the graphile-worker schema', async () => {
  const t = await createTestDatabase();
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`.execute(t.db);
  const names = tables.rows.map((r) => r.table_name);
  for (const expected of ['accounts', 'api_tokens', 'wallets', 'wallet_transactions', 'mail_outbox', 'kysely_migration']) {
    assert.ok(names.includes(expected), `missing table ${expected}`);
  }
  const worker = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = 'graphile_worker'`.execute(t.db);
  assert.equal(worker.rows[0].n, 1);
});

test('a wallet balance can never go below zero', async () => {
  const t = await createTestDatabase();
  const a = await t.db
    .insertInto('accounts')
    .values({ user_ref: 'AAAAAAAAAAAA', email: 'a@example.com', name: 'A', status: 'registered' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.db.insertInto('wallets').values({ account_id: a.id, balance: 0, total_purchased: 0 }).execute();
  await assert.rejects(t.db.updateTable('wallets').set({ balance: -1 }).where('account_id', '=', a.id).execute(), /check constraint/);
});
