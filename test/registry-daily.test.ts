import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { companySnapshot, crashingSource, krsFor, nipFor, regonFor, writeNdjson, type CompanySpec } from './helpers/registry.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { runDaily, formatSummary } from '../src/registry/daily.ts';
import { findCompanyByIdentifier, findRun } from '../src/registry/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'regwatch-daily-'));
const t = await createTestDatabase();

async function eventsOf(date: string) {
  const { rows } = await sql<{ id: string; primary_identifier: string; event_type: string; old_value: string | null; new_value: string | null; severity: string }>`
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
const c: CompanySpec = { n: 13, status: 'wykreślony', dates: [{ type: 'registration', date: '2001-01-01' }, { type: 'deletion', date: '2020-05-05' }] };

test('day 1: every company is new; one first seen deleted counts as new, not deleted', async () => {
  const file = writeNdjson(join(dir, 'day1.ndjson'), [a, b, c].map(companySnapshot));
  const s = await runDaily(t.db, { date: '2026-11-01', source: createFileSource(file), sourceKey: `file:${file}` });
  assert.deepEqual({ new: s.new, updated: s.updated, deleted: s.deleted, events: s.events, total: s.total }, { new: 3, updated: 0, deleted: 0, events: 0, total: 3 });
  assert.match(formatSummary(s), /new=3 updated=0 deleted=0 events=0/);
  assert.equal(await count('companies'), 3);
  assert.equal(await count('company_identifiers'), 9);
  const stored = await findCompanyByIdentifier(t.db, { type: 'KRS', value: krsFor(11) });
  assert.equal(stored?.name, 'ALFA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ');
  assert.equal(stored?.primary_identifier, nipFor(11));
  assert.equal(stored?.status, 'ACTIVE');
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(13) }))?.status, 'DELETED');
});
