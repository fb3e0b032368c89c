import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import { insertTestMessage } from '../src/modules/webhooks/repo.ts';
import { createTestDatabase } from './helpers/db.ts';

/**
 * Messages keyed by (endpoint, id) with no foreign key to their endpoint (migration
 * 20261128000300_webhook_deliveries_keys): deleting an endpoint (or its account) still deletes its
 * messages, through a statement trigger; an insert of messages holds its endpoint FOR KEY SHARE,
 * so a deletion meanwhile waits for it and then deletes what it inserted; existing messages
 * migrate both ways.
 */

const MIGRATION = '20261128000300_webhook_deliveries_keys';
const BEFORE = '20261128000200_webhook_deliveries_account_fk';
const migrationFolder = path.join(import.meta.dirname, '..', 'src', 'db', 'migrations');
const T0 = new Date('2030-04-01T12:00:00Z');
let refs = 0;

type Db = Awaited<ReturnType<typeof createTestDatabase>>['db'];

async function endpointWith(db: Db, messages: number): Promise<{ account: string; id: string }> {
  const ref = `K${++refs}`;
  const {
    rows: [acct],
  } = await sql<{ id: string }>`
    INSERT INTO accounts (user_ref, email, name, status) VALUES (${ref}, ${`${ref}@keys.test`}, 'keys', 'initialized') RETURNING id`.execute(
    db,
  );
  const {
    rows: [ep],
  } = await sql<{ id: string }>`
    INSERT INTO webhook_endpoints (account_id, url) VALUES (${acct!.id}, 'http://127.0.0.1:9/hook') RETURNING id`.execute(db);
  await sql`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at)
    SELECT ${ep!.id}, ${acct!.id}, 'COMPANY_NAME_CHANGED', json_build_object('n', g), ${T0}::timestamptz FROM generate_series(1, ${messages}) g`.execute(
    db,
  );
  return { account: acct!.id, id: ep!.id };
}

const count = async (db: Db, endpointId: string) =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`.execute(db)).rows[0]!.n;

const primaryKey = async (db: Db) =>
  (
    await sql<{
      def: string;
    }>`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'webhook_deliveries_pkey'`.execute(db)
  ).rows[0]!.def;

test('the migration keeps every message, both ways; deletions still reach them', async () => {
  const t = await createTestDatabase();
  const migrator = new Migrator({ db: t.db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
  const down = await migrator.migrateTo(BEFORE);
  assert.equal(down.error, undefined);
  assert.ok(down.results?.some((r) => r.migrationName === MIGRATION && r.direction === 'Down' && r.status === 'Success'));
  assert.equal(await primaryKey(t.db), 'PRIMARY KEY (id)');

  const a = await endpointWith(t.db, 3);
  const b = await endpointWith(t.db, 2);
  assert.equal((await migrator.migrateToLatest()).error, undefined);
  assert.equal(await primaryKey(t.db), 'PRIMARY KEY (endpoint_id, id)');
  assert.deepEqual([await count(t.db, a.id), await count(t.db, b.id)], [3, 2]);

  // An endpoint's deletion deletes its messages; an account's, through its endpoints.
  await sql`DELETE FROM webhook_endpoints WHERE id = ${a.id}`.execute(t.db);
  assert.deepEqual([await count(t.db, a.id), await count(t.db, b.id)], [0, 2]);
  await sql`DELETE FROM accounts WHERE id = ${b.account}`.execute(t.db);
  assert.equal(await count(t.db, b.id), 0);

  // Down again: the messages stay, the key is back (and cascades).
  const c = await endpointWith(t.db, 4);
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined);
  assert.equal(await primaryKey(t.db), 'PRIMARY KEY (id)');
  assert.equal(await count(t.db, c.id), 4);
  await sql`DELETE FROM webhook_endpoints WHERE id = ${c.id}`.execute(t.db);
  assert.equal(await count(t.db, c.id), 0);
  assert.equal((await migrator.migrateToLatest()).error, undefined);
});

test('a message inserted for an endpoint being deleted: the deletion waits for it, then deletes it too', async () => {
  const t = await createTestDatabase();
  const e = await endpointWith(t.db, 1);
  const deletion: Promise<unknown>[] = [];
  await t.db.transaction().execute(async (trx) => {
    const id = await insertTestMessage(trx, { id: e.id, account_id: e.account }, 'COMPANY_NAME_CHANGED', { test: true }, T0);
    assert.notEqual(id, null);
    deletion.push(sql`DELETE FROM webhook_endpoints WHERE id = ${e.id}`.execute(t.db));
    // The deletion waits on the endpoint's row, locked by this transaction's insert.
    for (;;) {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM webhook_endpoints%'`.execute(t.db);
      if (rows[0]!.n > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
  });
  await Promise.all(deletion);
  assert.equal(await count(t.db, e.id), 0, 'the message committed before the deletion went with it');
  assert.equal(
    await insertTestMessage(t.db, { id: e.id, account_id: e.account }, 'COMPANY_NAME_CHANGED', { test: true }, T0),
    null,
    'no message for an endpoint that is gone',
  );
});
