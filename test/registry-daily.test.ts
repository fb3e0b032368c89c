import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { companySnapshot, crashingSource, krsFor, nipFor, regonFor, writeNdjson, type CompanySpec } from './helpers/registry.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { runDaily, formatSummary } from '../src/registry/daily.ts';
import { findCompanyByIdentifier, findRun } from '../src/registry/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'regwatch-daily-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const t = await createTestDatabase();

async function eventsOf(date: string) {
  const { rows } = await sql<{
    id: string;
    primary_identifier: string;
    event_type: string;
    old_value: string | null;
    new_value: string | null;
    severity: string;
  }>`
    SELECT e.id, c.primary_identifier, e.event_type, e.old_value, e.new_value, e.severity
    FROM events e JOIN companies c ON c.id = e.company_id
    WHERE e.event_date = ${date}::date ORDER BY e.id`.execute(t.db);
  return rows;
}

async function count(table: 'companies' | 'events' | 'company_identifiers'): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(t.db);
  return rows[0]!.n;
}

const a: CompanySpec = { n: 11, name: 'ALFA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' };
const b: CompanySpec = { n: 12, name: 'BETA SPÓŁKA AKCYJNA', legalForm: 'SPÓŁKA AKCYJNA' };
const c: CompanySpec = {
  n: 13,
  status: 'wykreślony',
  dates: [
    { type: 'registration', date: '2001-01-01' },
    { type: 'deletion', date: '2020-05-05' },
  ],
};

test('day 1: every company is new; one first seen deleted counts as new, not deleted', async () => {
  const file = writeNdjson(join(dir, 'day1.ndjson'), [a, b, c].map(companySnapshot));
  const s = await runDaily(t.db, { date: '2026-11-01', source: createFileSource(file), sourceKey: `file:${file}` });
  assert.deepEqual(
    { new: s.new, updated: s.updated, deleted: s.deleted, events: s.events, total: s.total },
    { new: 3, updated: 0, deleted: 0, events: 0, total: 3 },
  );
  assert.match(formatSummary(s), /new=3 updated=0 deleted=0 events=0/);
  assert.equal(await count('companies'), 3);
  assert.equal(await count('company_identifiers'), 9);
  const stored = await findCompanyByIdentifier(t.db, { type: 'KRS', value: krsFor(11) });
  assert.equal(stored?.name, 'ALFA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
  assert.equal(stored?.primary_identifier, nipFor(11));
  assert.equal(stored?.status, 'ACTIVE');
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(13) }))?.status, 'DELETED');
});

const a2: CompanySpec = {
  ...a,
  name: 'ALFA NOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
  contacts: [
    { type: 'email', value: 'biuro11@example.pl' },
    { type: 'phone', value: '+48 42 111 22 33' },
  ],
};
const b2: CompanySpec = {
  ...b,
  status: 'wykreślony',
  dates: [
    { type: 'registration', date: '2015-03-02' },
    { type: 'activity_start', date: '2015-03-10' },
    { type: 'deletion', date: '2026-11-02' },
  ],
};
const d: CompanySpec = { n: 14, withoutKrs: true };
let day2File = '';

test('day 2: changed companies get exact events; absent ones are unchanged; counts as docs/api-contract.md defines them', async () => {
  day2File = writeNdjson(join(dir, 'day2.ndjson'), [a2, b2, d].map(companySnapshot));
  const s = await runDaily(t.db, { date: '2026-11-02', source: createFileSource(day2File), sourceKey: `file:${day2File}` });
  assert.deepEqual(
    { new: s.new, updated: s.updated, deleted: s.deleted, events: s.events, total: s.total },
    { new: 1, updated: 2, deleted: 1, events: 4, total: 4 },
  );
  const events = (await eventsOf('2026-11-02')).map(({ id: _id, ...e }) => e);
  assert.deepEqual(events, [
    {
      primary_identifier: nipFor(11),
      event_type: 'COMPANY_NAME_CHANGED',
      old_value: 'ALFA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      new_value: 'ALFA NOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
      severity: 'info',
    },
    {
      primary_identifier: nipFor(11),
      event_type: 'COMPANY_PHONE_CHANGED',
      old_value: null,
      new_value: '+48 42 111 22 33',
      severity: 'info',
    },
    {
      primary_identifier: nipFor(12),
      event_type: 'COMPANY_STATUS_CHANGED',
      old_value: 'aktywny',
      new_value: 'wykreślony',
      severity: 'critical',
    },
    { primary_identifier: nipFor(12), event_type: 'COMPANY_CLOSED_DATE', old_value: null, new_value: '2026-11-02', severity: 'critical' },
  ]);
  const beta = await findCompanyByIdentifier(t.db, { type: 'REGON9', value: regonFor(12) });
  assert.equal(beta?.status, 'DELETED');
  assert.equal(beta?.last_changed_date, '2026-11-02');
  const gamma = await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(13) });
  assert.equal(gamma?.last_changed_date, null, 'a company absent from the file is unchanged');
});

test('running a date twice adds nothing, and the same content from another file adds nothing either', async () => {
  const before = { companies: await count('companies'), events: await count('events'), identifiers: await count('company_identifiers') };
  const again = await runDaily(t.db, { date: '2026-11-02', source: createFileSource(day2File), sourceKey: `file:${day2File}` });
  assert.equal(again.alreadyCompleted, true);
  assert.deepEqual(
    { new: again.new, updated: again.updated, deleted: again.deleted, events: again.events },
    { new: 1, updated: 2, deleted: 1, events: 4 },
  );
  const copy = writeNdjson(join(dir, 'day2-copy.ndjson'), [a2, b2, d].map(companySnapshot));
  const other = await runDaily(t.db, { date: '2026-11-02', source: createFileSource(copy), sourceKey: `file:${copy}` });
  assert.equal(other.alreadyCompleted, false);
  assert.deepEqual(
    { new: other.new, updated: other.updated, deleted: other.deleted, events: other.events },
    { new: 0, updated: 0, deleted: 0, events: 0 },
  );
  assert.deepEqual(
    { companies: await count('companies'), events: await count('events'), identifiers: await count('company_identifiers') },
    before,
  );
});

test('a run killed halfway and run again loses and doubles nothing', async () => {
  const specs = Array.from({ length: 60 }, (_, i) => ({ n: 1000 + i }));
  const base = writeNdjson(join(dir, 'day3.ndjson'), specs.map(companySnapshot));
  await runDaily(t.db, { date: '2026-11-03', source: createFileSource(base), sourceKey: 'base', batchSize: 7 });
  // Day 4 changes every company's name, and a few appear twice (a later line wins).
  const changed = specs.map((s) => companySnapshot({ ...s, name: `ZMIENIONA ${s.n}` }));
  const twice = companySnapshot({ n: 1003, name: 'ZMIENIONA DRUGI RAZ 1003' });
  const file = writeNdjson(join(dir, 'day4.ndjson'), [...changed.slice(0, 30), twice, ...changed.slice(30)]);
  const key = `file:${file}`;

  await assert.rejects(
    runDaily(t.db, { date: '2026-11-04', source: crashingSource(createFileSource(file), 33), sourceKey: key, batchSize: 7 }),
    /simulated crash/,
  );
  const failed = await findRun(t.db, '2026-11-04', key);
  assert.equal(failed?.status, 'failed');
  const eventsAfterCrash = (await eventsOf('2026-11-04')).length;
  assert.ok(eventsAfterCrash > 0 && eventsAfterCrash < 61, `some batches committed before the crash (${eventsAfterCrash})`);
  assert.equal(failed?.events_count, eventsAfterCrash, 'counters commit with their rows');

  const resumed = await runDaily(t.db, { date: '2026-11-04', source: createFileSource(file), sourceKey: key, batchSize: 7 });
  assert.equal(resumed.resumed, true);
  assert.deepEqual(
    { new: resumed.new, updated: resumed.updated, deleted: resumed.deleted, events: resumed.events },
    { new: 0, updated: 60, deleted: 0, events: 61 },
  );
  const events = await eventsOf('2026-11-04');
  assert.equal(events.length, 61);
  const perCompany = new Map<string, string[]>();
  for (const e of events) perCompany.set(e.primary_identifier, [...(perCompany.get(e.primary_identifier) ?? []), e.new_value ?? '']);
  assert.equal(perCompany.size, 60);
  assert.deepEqual(perCompany.get(nipFor(1003)), ['ZMIENIONA 1003', 'ZMIENIONA DRUGI RAZ 1003']);
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(1003) }))?.name, 'ZMIENIONA DRUGI RAZ 1003');
  const ids = events.map((e) => BigInt(e.id));
  assert.deepEqual(
    [...ids].sort((x, y) => (x < y ? -1 : 1)),
    ids,
    'ids follow the order the changes were read',
  );
});

test('a second run of the same date and key while one is in progress is refused', async () => {
  const { RunInProgressError } = await import('../src/registry/daily.ts');
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const slow = {
    name: 'file' as const,
    async *snapshotsForDate() {
      await gate;
      yield companySnapshot({ n: 5000 });
    },
  };
  const first = runDaily(t.db, { date: '2026-11-05', source: slow, sourceKey: 'slow' });
  await new Promise((r) => setTimeout(r, 200));
  await assert.rejects(runDaily(t.db, { date: '2026-11-05', source: slow, sourceKey: 'slow' }), RunInProgressError);
  release();
  assert.equal((await first).new, 1);
});

test('two runs racing on the same new companies store each once', async () => {
  const { arraySource } = await import('./helpers/registry.ts');
  const snapshots = Array.from({ length: 120 }, (_, i) => companySnapshot({ n: 7000 + i }));
  const before = await count('companies');
  const [x, y] = await Promise.all([
    runDaily(t.db, { date: '2026-11-06', source: arraySource(snapshots), sourceKey: 'race-x', batchSize: 10 }),
    runDaily(t.db, { date: '2026-11-06', source: arraySource([...snapshots].reverse()), sourceKey: 'race-y', batchSize: 10 }),
  ]);
  assert.equal(x.new + y.new, 120);
  assert.equal(x.updated + y.updated + x.events + y.events, 0);
  assert.equal(await count('companies'), before + 120);
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM company_identifiers ci LEFT JOIN companies c ON c.id = ci.company_id WHERE c.id IS NULL`.execute(t.db);
  assert.equal(rows[0]!.n, 0, 'no identifier points at a missing company');
});

test('a snapshot that cannot be used is skipped and counted; the run goes on', async () => {
  const { arraySource } = await import('./helpers/registry.ts');
  const broken = {
    identity: { identifiers: [{ type: 'NIP', value: nipFor(8001) }], company_type: '', country_code: 'PL' },
    profiles: [null],
    persons: [],
  };
  const noIdentifier = {
    identity: { identifiers: [{ type: 'NIP', value: '1234567890' }], company_type: '', country_code: 'PL' },
    profiles: [],
    persons: [],
  };
  const s = await runDaily(t.db, {
    date: '2026-11-07',
    source: arraySource([companySnapshot({ n: 8000 }), broken as never, noIdentifier as never, companySnapshot({ n: 8002 })]),
    sourceKey: 'broken',
  });
  assert.deepEqual({ new: s.new, skipped: s.skipped }, { new: 2, skipped: 2 });
  assert.equal(await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(8001) }), null);
});

test('values too long for any search (a 9,000-character city, a 3,000-digit postal code, a 4,000-digit activity code) are stored but not indexed; the run completes', async () => {
  const huge = {
    city: 'Ł'.repeat(9000),
    postalCode: '9'.repeat(3000),
    activities: [{ code: '7'.repeat(4000), name: 'x', is_primary: true }],
  };
  const first = writeNdjson(join(dir, 'huge-1.ndjson'), [companySnapshot({ n: 8200, ...huge }), companySnapshot({ n: 8201 })]);
  const day1 = await runDaily(t.db, { date: '2026-11-20', source: createFileSource(first), sourceKey: 'huge' });
  assert.deepEqual({ new: day1.new, skipped: day1.skipped }, { new: 2, skipped: 0 });
  // An existing company's update to such values, on the UPDATE path.
  const second = writeNdjson(join(dir, 'huge-2.ndjson'), [companySnapshot({ n: 8201, ...huge, city: 'x'.repeat(3000) })]);
  const day2 = await runDaily(t.db, { date: '2026-11-21', source: createFileSource(second), sourceKey: 'huge' });
  assert.deepEqual({ updated: day2.updated, skipped: day2.skipped }, { updated: 1, skipped: 0 });
  const { rows } = await sql<{ n: string; city_folded: string | null; postal_code: string | null; codes: string[]; city: string }>`
    SELECT primary_identifier AS n, city_folded, postal_code, activity_codes AS codes, (snapshot::jsonb)->'profiles'->0->'address'->>'city' AS city
    FROM companies WHERE primary_identifier IN (${nipFor(8200)}, ${nipFor(8201)}) ORDER BY primary_identifier`.execute(t.db);
  assert.deepEqual(
    rows.map((r) => ({ city_folded: r.city_folded, postal_code: r.postal_code, codes: r.codes, city: r.city.length })),
    [
      { city_folded: null, postal_code: null, codes: [], city: 9000 },
      { city_folded: null, postal_code: null, codes: [], city: 3000 },
    ],
  );
});

test('lines of a file that cannot be used at all are counted as skipped, read on this thread or in the worker', async () => {
  const good = (n: number) => JSON.stringify(companySnapshot({ n }));
  const text =
    [good(8100), 'not json', '{"identity": {"identifiers": []}}', `\uFEFF${good(8101)}`, good(8102), '{"identity": 5}'].join('\n') + '\n';
  for (const [i, prepareInWorker] of [false, true].entries()) {
    const path = join(dir, `unreadable-${i}.ndjson`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, text);
    const lines: number[] = [];
    const s = await runDaily(t.db, {
      date: `2026-11-1${i}`,
      source: createFileSource(path, { onError: (line) => lines.push(line) }),
      sourceKey: `unreadable-${i}`,
      prepareInWorker,
    });
    assert.deepEqual({ skipped: s.skipped, lines }, { skipped: 4, lines: [2, 3, 4, 6] }, `in the worker: ${String(prepareInWorker)}`);
    assert.equal((await findRun(t.db, `2026-11-1${i}`, `unreadable-${i}`))?.skipped_count, 4);
    assert.match(formatSummary(s), / skipped=4/);
  }
});

test('when every snapshot fails the same way, the run stops instead of skipping a whole registry', async () => {
  const { arraySource } = await import('./helpers/registry.ts');
  const { MAX_FAILURES_IN_A_ROW } = await import('../src/registry/daily.ts');
  const broken = Array.from({ length: MAX_FAILURES_IN_A_ROW + 5 }, (_, i) => ({
    identity: { identifiers: [{ type: 'NIP', value: nipFor(9000 + i) }], company_type: '', country_code: 'PL' },
    profiles: [null],
    persons: [],
  }));
  await assert.rejects(
    runDaily(t.db, { date: '2026-11-08', source: arraySource(broken as never), sourceKey: 'all-broken' }),
    /in a row could not be processed/,
  );
  assert.equal((await findRun(t.db, '2026-11-08', 'all-broken'))?.status, 'failed');
});
