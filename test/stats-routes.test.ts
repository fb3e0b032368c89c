import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaily } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { createTestApp } from './helpers/app.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';

function company(nip: string, name: string, extra: Partial<CompanySnapshot['profiles'][number]> = {}): CompanySnapshot {
  return {
    identity: { identifiers: [{ type: 'NIP', value: nip }], company_type: 'osoba prawna', country_code: 'PL' },
    profiles: [
      {
        source: 'file',
        name,
        status: 'aktywny',
        legal_form: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
        address: {
          street: 'ul. Prosta',
          building: '1',
          apartment: '',
          city: 'Warszawa',
          postal_code: '00-850',
          voivodeship: 'mazowieckie',
          country_code: 'PL',
        },
        units: [],
        contacts: [],
        activities: [{ code: '6201Z', name: 'Działalność związana z oprogramowaniem', is_primary: true }],
        dates: [{ type: 'activity_start', date: '2020-01-01' }],
        websites: [],
        vat_status: null,
        bank_accounts: [],
        ...extra,
      },
    ],
    persons: [],
  };
}

function ndjson(rows: CompanySnapshot[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'rw-stats-'));
  const p = join(dir, 'day.ndjson');
  writeFileSync(p, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return p;
}

test('stats day and range from real daily runs; 404 without a run; 422 for a malformed date; 10 a minute per IP', async () => {
  const t = await createTestApp();
  // Valid NIPs (checksum): 5261040828, 5270103391, 7740001454.
  await runDaily(t.db.db, {
    date: '2026-11-01',
    source: createFileSource(ndjson([company('5261040828', 'ALFA SP. Z O.O.'), company('5270103391', 'BETA SP. Z O.O.')])),
    sourceKey: 'file',
  });
  await runDaily(t.db.db, {
    date: '2026-11-03',
    source: createFileSource(
      ndjson([
        company('5261040828', 'ALFA NOWA SP. Z O.O.'),
        company('5270103391', 'BETA SP. Z O.O.', {
          status: 'wykreślony',
          dates: [
            { type: 'activity_start', date: '2020-01-01' },
            { type: 'deletion', date: '2026-11-02' },
          ],
        }),
        company('7740001454', 'GAMMA S.A.'),
      ]),
    ),
    sourceKey: 'file',
  });

  const day = await t.app.inject({ method: 'GET', url: '/api/v1/stats/day/2026-11-03', remoteAddress: '10.1.0.1' });
  assert.equal(day.statusCode, 200);
  const d = day.json();
  assert.deepEqual(Object.keys(d).sort(), ['data', 'meta']);
  assert.equal(d.meta.date, '2026-11-03');
  assert.equal(d.meta.type, 'daily_snapshot');
  assert.equal(typeof d.meta.source, 'string');
  assert.equal(typeof d.meta.description, 'string');
  assert.deepEqual(d.data, { new: 1, updated: 2, deleted: 1, total: 3 });
  assert.equal(day.headers['x-ratelimit-limit'], '10');

  const first = await t.app.inject({ method: 'GET', url: '/api/v1/stats/day/2026-11-01', remoteAddress: '10.1.0.1' });
  assert.deepEqual(first.json().data, { new: 2, updated: 0, deleted: 0, total: 2 });

  const range = await t.app.inject({ method: 'GET', url: '/api/v1/stats/range/2026-11-20', remoteAddress: '10.1.0.1' });
  assert.equal(range.statusCode, 200);
  const r = range.json();
  assert.equal(r.meta.from_date, '2026-11-01');
  assert.equal(r.meta.to_date, '2026-11-03');
  assert.deepEqual(r.data, { new: 3, updated: 2, deleted: 1, total: 3 });

  const none = await t.app.inject({ method: 'GET', url: '/api/v1/stats/day/2026-11-02', remoteAddress: '10.1.0.1' });
  assert.equal(none.statusCode, 404);
  assert.equal(typeof none.json().message, 'string');
  const noneRange = await t.app.inject({ method: 'GET', url: '/api/v1/stats/range/2025-01-01', remoteAddress: '10.1.0.1' });
  assert.equal(noneRange.statusCode, 404);

  for (const bad of ['2026-13-01', '2026-02-30', 'yesterday', '20261101']) {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/stats/day/${bad}`, remoteAddress: '10.1.0.1' });
    assert.equal(res.statusCode, 422, bad);
    assert.ok(res.json().errors.date);
  }
  // That was 9 requests from 10.1.0.1: the 10th passes, the 11th is refused; another IP is not.
  const tenth = await t.app.inject({ method: 'GET', url: '/api/v1/stats/range/2026-11-03', remoteAddress: '10.1.0.1' });
  assert.equal(tenth.statusCode, 200);
  assert.equal(tenth.headers['x-ratelimit-remaining'], '0');
  const over = await t.app.inject({ method: 'GET', url: '/api/v1/stats/day/2026-11-03', remoteAddress: '10.1.0.1' });
  assert.equal(over.statusCode, 429);
  assert.deepEqual(over.json(), { message: 'Too Many Attempts.' });
  assert.ok(Number(over.headers['retry-after']) > 0);
  const other = await t.app.inject({ method: 'GET', url: '/api/v1/stats/day/2026-11-03', remoteAddress: '10.1.0.2' });
  assert.equal(other.statusCode, 200);
});
