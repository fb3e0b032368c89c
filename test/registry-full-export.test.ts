import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor, type CompanySpec } from './helpers/registry.ts';
import { estimateLines, isFullExport, runDaily } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';

// A day's full export (every company, most unchanged) is prepared in the worker thread by default
// (src/registry/daily/full-export-heuristics.ts looksLikeFullExport); it must detect exactly what this thread detects.

const dir = mkdtempSync(join(tmpdir(), 'regwatch-full-export-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const base: CompanySpec[] = Array.from({ length: 60 }, (_, i) => ({ n: 800 + i, city: i % 3 ? 'Gdańsk' : 'Łódź' }));

const day2: CompanySpec[] = base.map((spec, i) => {
  if (i % 7 === 0) return { ...spec, name: `FIRMA ${spec.n} NOWA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ` };
  if (i % 11 === 0) return { ...spec, contacts: [{ type: 'phone', value: `+48 600 100 ${100 + i}` }] };
  if (i === 5)
    return {
      ...spec,
      status: 'wykreślony',
      dates: [
        { type: 'registration', date: '2015-03-02' },
        { type: 'deletion', date: '2026-11-02' },
      ],
    };
  return spec;
});
const changedOnDay2 = (i: number) => i % 7 === 0 || i % 11 === 0 || i === 5;
const extraLines = [
  '{"identity": {"identifiers": []}}',
  // A company listed twice: the later line wins.
  JSON.stringify(companySnapshot({ ...base[3]!, name: 'FIRMA 803 DRUGA ZMIANA' })),
  // Two companies new today.
  JSON.stringify(companySnapshot({ n: 900, name: 'NOWA ŻÓŁTA SPÓŁKA' })),
  JSON.stringify(companySnapshot({ n: 901 })),
];

/** Day 1 from an array, then day 2 from `lines` as a file, prepared in the worker or on this thread: what was stored. */
async function dayTwoOutcome(name: string, lines: string[], prepareInWorker: boolean) {
  const path = join(dir, `${name}.ndjson`);
  writeFileSync(path, lines.join('\n') + '\n');
  const t = await createTestDatabase();
  await runDaily(t.db, { date: '2026-11-01', source: arraySource(base.map(companySnapshot)), sourceKey: 'day1' });
  const s = await runDaily(t.db, {
    date: '2026-11-02',
    source: createFileSource(path),
    sourceKey: 'file',
    batchSize: 8,
    prepareInWorker,
  });
  const { rows: events } = await sql<Record<string, unknown>>`
    SELECT c.primary_identifier, e.event_type, e.old_value, e.new_value, e.severity
    FROM events e JOIN companies c ON c.id = e.company_id WHERE e.event_date = '2026-11-02' ORDER BY e.id`.execute(t.db);
  const { rows: companies } = await sql<Record<string, unknown>>`
    SELECT primary_identifier, name, status, snapshot, encode(content_hash, 'hex') AS hash, source_fingerprints, revision,
      name_folded, city_folded, voivodeship_folded, postal_code, legal_form, activity_codes, main_activity,
      activity_start::text AS activity_start, has_phone, has_email, has_fax,
      first_seen_date::text AS first_seen_date, last_changed_date::text AS last_changed_date
    FROM companies ORDER BY primary_identifier`.execute(t.db);
  return {
    summary: { new: s.new, updated: s.updated, deleted: s.deleted, events: s.events, skipped: s.skipped, total: s.total },
    events,
    companies,
  };
}

test('a full export run through the preparing worker detects and stores exactly what this thread does', async () => {
  const lines = [...day2.map((s) => JSON.stringify(companySnapshot(s))), ...extraLines];
  const inWorker = await dayTwoOutcome('full', lines, true);
  const here = await dayTwoOutcome('full', lines, false);
  assert.deepEqual(inWorker, here);
  // 9 renamed, 5 with a phone, 1 deleted, and the company listed twice; the line without
  // identifiers is skipped by the file source and counted as skipped.
  assert.deepEqual(here.summary, { new: 2, updated: 16, deleted: 1, events: here.events.length, skipped: 1, total: 62 });
  assert.ok(here.events.length >= 16);
  assert.equal(here.companies.find((c) => c.primary_identifier === nipFor(803))!.name, 'FIRMA 803 DRUGA ZMIANA');
});

// A delta (only the changed companies) through the worker: the worker derives each line's row, and
// a changed company whose merge is its incoming snapshot is written with that row (planner.ts
// preparedRowFields), the status of its row included (the deleted company).
test('a delta run through the preparing worker, with the rows it derived, detects and stores exactly what this thread does', async () => {
  const lines = [...day2.filter((_, i) => changedOnDay2(i)).map((s) => JSON.stringify(companySnapshot(s))), ...extraLines];
  const inWorker = await dayTwoOutcome('delta', lines, true);
  const here = await dayTwoOutcome('delta', lines, false);
  assert.deepEqual(inWorker, here);
  assert.deepEqual(here.summary, { new: 2, updated: 16, deleted: 1, events: here.events.length, skipped: 1, total: 62 });
  assert.ok(here.events.length >= 16);
});

test('a file is taken for a full export when its estimated lines are at least half the registry', () => {
  const path = join(dir, 'lines.ndjson');
  // 30,000 lines of about 120 bytes: 3.6 MB, so only the first megabyte is read.
  const line = (i: number) => JSON.stringify({ n: i, pad: 'x'.repeat(100 + (i % 7)) });
  const text = Array.from({ length: 30_000 }, (_, i) => line(i)).join('\n') + '\n';
  writeFileSync(path, text);
  const estimate = estimateLines(path, Buffer.byteLength(text));
  assert.ok(Math.abs(estimate - 30_000) < 300, `estimated ${estimate} lines`);
  const single = join(dir, 'single.ndjson');
  writeFileSync(single, line(1));
  assert.equal(estimateLines(single, Buffer.byteLength(line(1))), 1);

  assert.equal(isFullExport(estimate, 0), true, 'an empty registry');
  assert.equal(isFullExport(30_000, 60_000), true);
  assert.equal(isFullExport(30_000, 60_001), false);
  assert.equal(isFullExport(100_000, 1_000_000), false, 'the detection benchmark: a delta of a tenth');
  assert.equal(isFullExport(1_000_000, 1_000_000), true);
});
