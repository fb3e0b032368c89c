import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { identifierKey } from '../src/lib/identifiers.ts';
import { findCompanyIdByIdentifier } from '../src/registry/store.ts';
import type { IdentifierType } from '../src/registry/model.ts';

// company_identifiers is keyed by one bigint (migration 20261122000500_identifier_keys). The
// service computes keys in TypeScript (identifierKey) and SQL in identifier_key(); the two must
// agree, and the migration must carry every identifier of an existing registry across.

const MIGRATION = '20261122000500_identifier_keys';
const BEFORE = '20261122000400_watch_item_removed';
const migrationFolder = path.join(import.meta.dirname, '..', 'src', 'db', 'migrations');

const storedIdentifier = fc.tuple(fc.constantFrom<IdentifierType>('NIP', 'REGON9', 'KRS'), fc.maxSafeNat()).map(([type, n]) => {
  const digits = type === 'REGON9' ? 9 : 10;
  return { type, value: String(n % 10 ** digits).padStart(digits, '0') };
});

test('identifier_key(), identifier_type() and identifier_value() in SQL agree with identifierKey', async () => {
  const t = await createTestDatabase();
  const samples = fc.sample(storedIdentifier, 500).concat([
    { type: 'KRS', value: '0000000001' },
    { type: 'REGON9', value: '000000000' },
    { type: 'NIP', value: '9999999999' },
  ]);
  const { rows } = await sql<{ key: string; type: string; value: string }>`
    SELECT identifier_key(x.type, x.value)::text AS key, identifier_type(identifier_key(x.type, x.value)) AS type,
      identifier_value(identifier_key(x.type, x.value)) AS value
    FROM unnest(${samples.map((s) => s.type)}::text[], ${samples.map((s) => s.value)}::text[]) WITH ORDINALITY AS x(type, value, n)
    ORDER BY x.n`.execute(t.db);
  assert.deepEqual(
    rows,
    samples.map((s) => ({ key: identifierKey(s.type, s.value), type: s.type, value: s.value })),
  );
  // The key's range is checked: a type the function does not know gives no key, and no row.
  await assert.rejects(
    sql`INSERT INTO company_identifiers (key, company_id) VALUES (identifier_key('REGON14', '12345678901234'), 1)`.execute(t.db),
    /null value/,
  );
  await assert.rejects(sql`INSERT INTO company_identifiers (key, company_id) VALUES (40000000000, 1)`.execute(t.db), /check constraint/);
});

test("the migration carries a registry's identifiers to keys and back, with the company index deferred or not", async () => {
  const t = await createTestDatabase();
  const migrator = new Migrator({ db: t.db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
  const down = await migrator.migrateTo(BEFORE);
  assert.equal(down.error, undefined);
  assert.ok(down.results?.some((r) => r.migrationName === MIGRATION && r.direction === 'Down' && r.status === 'Success'));

  const before = [
    { type: 'NIP', value: '5261040828', company_id: '1' },
    { type: 'KRS', value: '0000028860', company_id: '1' },
    { type: 'REGON9', value: '012345675', company_id: '1' },
    { type: 'NIP', value: '7740001454', company_id: '2' },
    { type: 'KRS', value: '0000000001', company_id: '3' },
  ];
  await sql`INSERT INTO company_identifiers (type, value, company_id)
    SELECT * FROM unnest(${before.map((r) => r.type)}::text[], ${before.map((r) => r.value)}::text[], ${before.map((r) => r.company_id)}::bigint[])`.execute(
    t.db,
  );
  // As a first load that a crash interrupted leaves it (src/registry/deferred-indexes.ts).
  await sql`DROP INDEX company_identifiers_company_idx`.execute(t.db);

  const up = await migrator.migrateToLatest();
  assert.equal(up.error, undefined);
  const { rows } = await sql<{
    key: string;
    company_id: string;
  }>`SELECT key::text, company_id::text FROM company_identifiers ORDER BY key`.execute(t.db);
  assert.deepEqual(
    rows,
    before
      .map((r) => ({ key: identifierKey(r.type as IdentifierType, r.value)!, company_id: r.company_id }))
      .sort((a, b) => a.key.localeCompare(b.key)),
  );
  const indexes = await sql<{ indexname: string; indexdef: string }>`
    SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'company_identifiers' ORDER BY indexname`.execute(t.db);
  assert.deepEqual(
    indexes.rows.map((r) => r.indexname),
    ['company_identifiers_company_idx', 'company_identifiers_pkey'],
  );
  assert.match(indexes.rows[1]!.indexdef, /\(key\)/);
  for (const r of before)
    assert.equal(await findCompanyIdByIdentifier(t.db, { type: r.type as IdentifierType, value: r.value }), r.company_id);

  // And back: the text columns as they were.
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined);
  const { rows: restored } = await sql<{ type: string; value: string; company_id: string }>`
    SELECT type, value, company_id::text FROM company_identifiers ORDER BY company_id, type`.execute(t.db);
  assert.deepEqual(
    restored,
    [...before].sort((a, b) => a.company_id.localeCompare(b.company_id) || a.type.localeCompare(b.type)),
  );
  assert.equal((await migrator.migrateToLatest()).error, undefined);
});

// The key covers company_id (migration 20261130000100_company_identifiers_covering_key): a lookup
// by identifier reads the key's leaf alone, not the table's page after it (docs/benchmarks.md,
// "The identifiers' key, covering").
const COVERING = '20261130000100_company_identifiers_covering_key';
const BEFORE_COVERING = '20261129000100_companies_search_columns_collate_c';

test('a lookup by identifier reads the key alone (an index-only scan); the key is still unique on its own, down and up', async () => {
  const t = await createTestDatabase();
  const nips = Array.from({ length: 2000 }, (_, i) => String(5260000000 + i));
  await sql`INSERT INTO company_identifiers (key, company_id)
    SELECT * FROM unnest(${nips.map((v) => identifierKey('NIP', v))}::bigint[], ${nips.map((_, i) => i + 1)}::bigint[])`.execute(t.db);
  await sql`VACUUM ANALYZE company_identifiers`.execute(t.db);
  const probe = identifierKey('NIP', nips[1234]!)!;
  const plan = () =>
    t.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`
        EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT company_id FROM company_identifiers WHERE key = ${probe}::bigint`.execute(
        trx,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  const covered = await plan();
  assert.match(covered, /Index Only Scan using company_identifiers_pkey/);
  assert.match(covered, /Heap Fetches: 0/);
  assert.equal(await findCompanyIdByIdentifier(t.db, { type: 'NIP', value: nips[1234]! }), '1235');

  // Unique on the key alone: the same key for another company is refused, and ON CONFLICT (key) infers the key.
  await assert.rejects(
    sql`INSERT INTO company_identifiers (key, company_id) VALUES (${probe}::bigint, 99999)`.execute(t.db),
    /duplicate key/,
  );
  const { numAffectedRows } = await sql`
    INSERT INTO company_identifiers (key, company_id) VALUES (${probe}::bigint, 99999) ON CONFLICT (key) DO NOTHING`.execute(t.db);
  assert.equal(Number(numAffectedRows), 0);

  const migrator = new Migrator({ db: t.db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
  const down = await migrator.migrateTo(BEFORE_COVERING);
  assert.equal(down.error, undefined);
  assert.ok(down.results?.some((r) => r.migrationName === COVERING && r.direction === 'Down' && r.status === 'Success'));
  assert.match(await plan(), /Index Scan using company_identifiers_pkey/);
  assert.doesNotMatch(await plan(), /Index Only Scan/);
  assert.equal(await findCompanyIdByIdentifier(t.db, { type: 'NIP', value: nips[1234]! }), '1235');
  assert.equal((await migrator.migrateToLatest()).error, undefined);
  assert.match(await plan(), /Index Only Scan using company_identifiers_pkey/);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM company_identifiers`.execute(t.db);
  assert.equal(rows[0]!.n, nips.length);
});
