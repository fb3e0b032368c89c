import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { completedRunDays } from '../src/modules/stats/repo.ts';
import { findRunChanges, importedIdentifierOf } from '../src/modules/companies/repo.ts';

// An on-demand import's run is marked by daily_runs.kind (migration 20261122000600_daily_run_kind),
// not by its source key: the migration marks the imports an existing registry holds, and back.

const MIGRATION = '20261122000600_daily_run_kind';
const BEFORE = '20261122000500_identifier_keys';
const migrationFolder = path.join(import.meta.dirname, '..', 'src', 'db', 'migrations');

interface RunRow {
  source_key: string;
  kind: string;
  import_identifier_type: string | null;
  import_identifier_value: string | null;
}

test('the migration marks existing import runs by kind and identifier, and back', async () => {
  const t = await createTestDatabase();
  const migrator = new Migrator({ db: t.db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
  const down = await migrator.migrateTo(BEFORE);
  assert.equal(down.error, undefined);
  assert.ok(down.results?.some((r) => r.migrationName === MIGRATION && r.direction === 'Down' && r.status === 'Success'));

  const keys = [
    'krs',
    'synthetic:7',
    'import:krs+bir:NIP:5261040828',
    'import:ceidg:REGON9:012345675',
    'import:krs:KRS:0000028860',
    'import:odd',
  ];
  await sql`INSERT INTO daily_runs (run_date, source, source_key, status)
    SELECT '2026-11-01', 'krs', k, 'completed' FROM unnest(${keys}::text[]) AS k`.execute(t.db);

  assert.equal((await migrator.migrateToLatest()).error, undefined);
  const { rows } = await sql<RunRow>`
    SELECT source_key, kind, import_identifier_type, import_identifier_value FROM daily_runs ORDER BY id`.execute(t.db);
  assert.deepEqual(rows, [
    { source_key: 'krs', kind: 'daily', import_identifier_type: null, import_identifier_value: null },
    { source_key: 'synthetic:7', kind: 'daily', import_identifier_type: null, import_identifier_value: null },
    { source_key: 'import:krs+bir:NIP:5261040828', kind: 'import', import_identifier_type: 'NIP', import_identifier_value: '5261040828' },
    { source_key: 'import:ceidg:REGON9:012345675', kind: 'import', import_identifier_type: 'REGON9', import_identifier_value: '012345675' },
    { source_key: 'import:krs:KRS:0000028860', kind: 'import', import_identifier_type: 'KRS', import_identifier_value: '0000028860' },
    // A key that names no identifier is still an import (left out of statistics as before).
    { source_key: 'import:odd', kind: 'import', import_identifier_type: null, import_identifier_value: null },
  ]);
  const runs = await findRunChanges(t.db, 0, []);
  assert.deepEqual(runs.map(importedIdentifierOf), [
    null,
    null,
    { type: 'NIP', value: '5261040828' },
    { type: 'REGON9', value: '012345675' },
    { type: 'KRS', value: '0000028860' },
    null,
  ]);
  // Only the two daily runs count in the statistics.
  const days = await completedRunDays(t.db, '2026-11-01', '2026-11-01');
  assert.deepEqual(
    days.map((d) => d.sources),
    [['krs']],
  );
  // An identifier needs an import run, and both of its halves.
  await assert.rejects(
    sql`UPDATE daily_runs SET import_identifier_type = 'NIP', import_identifier_value = '1' WHERE source_key = 'krs'`.execute(t.db),
    /check constraint/,
  );
  await assert.rejects(
    sql`UPDATE daily_runs SET import_identifier_value = NULL WHERE source_key LIKE 'import:krs:%'`.execute(t.db),
    /check constraint/,
  );

  // And back: the columns go, every run stays as it was.
  assert.equal((await migrator.migrateTo(BEFORE)).error, undefined);
  const { rows: restored } = await sql<{ source_key: string }>`SELECT source_key FROM daily_runs ORDER BY id`.execute(t.db);
  assert.deepEqual(
    restored.map((r) => r.source_key),
    keys,
  );
  const { rows: columns } = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns WHERE table_name = 'daily_runs' AND column_name IN ('kind', 'import_identifier_type', 'import_identifier_value')`.execute(
    t.db,
  );
  assert.deepEqual(columns, []);
  assert.equal((await migrator.migrateToLatest()).error, undefined);
});

test('a run given an import identifier is recorded as an import, and left out of the statistics', async () => {
  const t = await createTestDatabase();
  const snapshot = companySnapshot({ n: 1 });
  await runDaily(t.db, { date: '2026-11-02', source: arraySource([snapshot]), sourceKey: 'daily-key' });
  await runDaily(t.db, {
    date: '2026-11-03',
    source: arraySource([companySnapshot({ n: 2 })]),
    sourceKey: 'import-key',
    importIdentifier: { type: 'NIP', value: nipFor(2) },
  });
  const { rows } = await sql<RunRow>`
    SELECT source_key, kind, import_identifier_type, import_identifier_value FROM daily_runs ORDER BY id`.execute(t.db);
  assert.deepEqual(rows, [
    { source_key: 'daily-key', kind: 'daily', import_identifier_type: null, import_identifier_value: null },
    { source_key: 'import-key', kind: 'import', import_identifier_type: 'NIP', import_identifier_value: nipFor(2) },
  ]);
  assert.deepEqual(
    (await completedRunDays(t.db, '2026-11-01', '2026-11-30')).map((d) => d.run_date),
    ['2026-11-02'],
  );
});
