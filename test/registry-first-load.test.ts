import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, krsFor, nipFor, regonFor } from './helpers/registry.ts';
import { runDaily } from '../src/registry/daily.ts';
import { findCompanyByIdentifier } from '../src/registry/store.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';

// A first load into an empty registry skips the per-batch lookup and takes every line as new
// (src/registry/daily/planner.ts planBatch `assumeNew`); these cases are the ones that assumption gets
// wrong, and the run must still store each company once, with the last line winning.
// Each test gets an empty registry of its own.

async function integrity(db: Awaited<ReturnType<typeof createTestDatabase>>['db']) {
  const { rows } = await sql<{ companies: number; identifiers: number; dangling: number }>`
    SELECT (SELECT count(*)::int FROM companies) AS companies, (SELECT count(*)::int FROM company_identifiers) AS identifiers,
      (SELECT count(*)::int FROM company_identifiers ci LEFT JOIN companies c ON c.id = ci.company_id WHERE c.id IS NULL) AS dangling`.execute(
    db,
  );
  return rows[0]!;
}

function only(s: CompanySnapshot, types: string[]): CompanySnapshot {
  return { ...s, identity: { ...s.identity, identifiers: s.identity.identifiers.filter((x) => types.includes(x.type)) } };
}

test('a company named again in a later batch of a first load, by another set of identifiers, is one company', async () => {
  const t = await createTestDatabase();
  const lines = [
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 100 + i })),
    only(companySnapshot({ n: 1, name: 'PIERWSZA' }), ['NIP', 'KRS']),
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 200 + i })),
    only(companySnapshot({ n: 1, name: 'DRUGA' }), ['KRS', 'REGON9']),
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 300 + i })),
    only(companySnapshot({ n: 1, name: 'TRZECIA' }), ['NIP']),
    ...Array.from({ length: 9 }, (_, i) => companySnapshot({ n: 400 + i })),
  ];
  const s = await runDaily(t.db, { date: '2026-11-01', source: arraySource(lines), batchSize: 4 });
  assert.equal(s.new, 37);
  // The day's total (kept per first-seen day, less the companies deleted when a line was not new).
  assert.equal(s.total, 37);
  assert.equal(s.processed + s.skipped, lines.length);
  const byNip = await findCompanyByIdentifier(t.db, { type: 'NIP', value: nipFor(1) });
  assert.equal(byNip?.name, 'TRZECIA');
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'REGON9', value: regonFor(1) }))?.id, byNip!.id);
  assert.equal((await findCompanyByIdentifier(t.db, { type: 'KRS', value: krsFor(1) }))?.id, byNip!.id);
  assert.deepEqual(await integrity(t.db), { companies: 37, identifiers: 36 * 3 + 3, dangling: 0 });

  // Each repeated line was retried with a lookup (the second ended the assumption); the 36 other companies
  // are each stored once (above).
});

test('two first loads racing into an empty registry store each company once', async () => {
  const t = await createTestDatabase();
  const snapshots = Array.from({ length: 150 }, (_, i) => companySnapshot({ n: 7000 + i }));
  const [x, y] = await Promise.all([
    runDaily(t.db, { date: '2026-11-01', source: arraySource(snapshots), sourceKey: 'race-x', batchSize: 10 }),
    runDaily(t.db, { date: '2026-11-01', source: arraySource([...snapshots].reverse()), sourceKey: 'race-y', batchSize: 10 }),
  ]);
  assert.equal(x.new + y.new, 150);
  assert.equal(Math.max(x.total, y.total), 150);
  assert.equal(x.updated + y.updated + x.events + y.events, 0);
  assert.deepEqual(await integrity(t.db), { companies: 150, identifiers: 450, dangling: 0 });
});

test('a first load through the preparing worker stores exactly what the same load on this thread stores', async () => {
  // The worker sends new companies' rows as UTF-8 bytes that go to PostgreSQL as they are
  // (src/registry/prepare-worker.ts); this thread builds the same rows as text. Polish letters,
  // a name holding the separators and a quote, a company listed twice (its second line is
  // retried with a lookup, from the worker's bytes) and lines that are skipped must all come out
  // the same either way.
  const lines = [
    ...Array.from({ length: 40 }, (_, i) => JSON.stringify(companySnapshot({ n: 500 + i, city: i % 2 ? 'Gdańsk' : 'Łódź' }))),
    JSON.stringify(companySnapshot({ n: 600, name: 'ZAŻÓŁĆ\u001e GĘŚLĄ\u001f "JAŹŃ"\u001d 🚀' })),
    '{"identity": {"identifiers": []}}',
    JSON.stringify(companySnapshot({ n: 505, name: 'FIRMA 505 PO ZMIANIE NAZWY' })),
    ...Array.from({ length: 20 }, (_, i) =>
      JSON.stringify(companySnapshot({ n: 700 + i, contacts: [{ type: 'phone', value: `+48 600 000 ${100 + i}` }] })),
    ),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-first-load-'));
  const path = join(dir, 'day.ndjson');
  writeFileSync(path, lines.join('\n') + '\n');
  const stored = async (prepareInWorker: boolean, copyRows: boolean) => {
    const t = await createTestDatabase();
    // Counts the COPY statements the load sends (writer.ts: a first load's batches, unless copyRows is false).
    let copies = 0;
    t.pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        if (/^COPY /.test((args[0] as { text?: string }).text ?? '')) copies++;
        return query(...args);
      };
    });
    const s = await runDaily(t.db, {
      date: '2026-11-01',
      source: createFileSource(path),
      sourceKey: 'file',
      batchSize: 8,
      prepareInWorker,
      copyRows,
    });
    // Two a batch that has new companies (companies, identifiers), none without copyRows.
    assert.ok(copyRows ? copies >= 16 : copies === 0, `${copies} COPY statements`);
    const { rows } = await sql<Record<string, unknown>>`
      SELECT c.primary_identifier_type, c.primary_identifier, c.name, c.status, c.snapshot, encode(c.content_hash, 'hex') AS hash,
        c.source_fingerprints, c.revision, c.name_folded, c.city_folded, c.voivodeship_folded, c.postal_code, c.legal_form,
        c.activity_codes, c.main_activity, c.activity_start::text AS activity_start, c.has_phone, c.has_email, c.has_fax,
        c.first_seen_date::text AS first_seen_date,
        (SELECT string_agg(identifier_type(ci.key) || '=' || identifier_value(ci.key), ',' ORDER BY identifier_type(ci.key)) FROM company_identifiers ci WHERE ci.company_id = c.id) AS identifiers
      FROM companies c ORDER BY c.primary_identifier`.execute(t.db);
    return {
      summary: { new: s.new, updated: s.updated, skipped: s.skipped, processed: s.processed, total: s.total },
      rows,
      integrity: await integrity(t.db),
    };
  };
  try {
    const inWorker = await stored(true, true);
    const here = await stored(false, true);
    assert.deepEqual(inWorker, here);
    // Binary COPY stores what INSERT stores (src/registry/store/company-copy.ts), from either thread's rows.
    assert.deepEqual(await stored(true, false), here);
    assert.deepEqual(await stored(false, false), here);
    assert.equal(here.rows.length, 61);
    assert.deepEqual(here.integrity, { companies: 61, identifiers: 183, dangling: 0 });
    const odd = here.rows.find((r) => r.primary_identifier === nipFor(600))!;
    // The snapshot keeps the name as sent; the search column has the control characters as spaces.
    assert.equal((JSON.parse(odd.snapshot as string) as CompanySnapshot).profiles[0]!.name, 'ZAŻÓŁĆ\u001e GĘŚLĄ\u001f "JAŹŃ"\u001d 🚀');
    assert.equal(odd.name, 'ZAŻÓŁĆ  GĘŚLĄ  "JAŹŃ"  🚀');
    assert.equal(here.rows.find((r) => r.primary_identifier === nipFor(505))!.name, 'FIRMA 505 PO ZMIANIE NAZWY');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
