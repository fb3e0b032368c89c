import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { defer } from './helpers/cleanup.ts';
import { nipFor } from './helpers/registry.ts';
import { runDay } from './watchlist-support.ts';
import { lookupCompaniesForBatch, type BatchLookupItem } from '../src/registry/store/companies-repo.ts';

// The daily lookup (identifiers, then the matched companies' rows by one bitmap heap scan) gives
// the same answer on its own connection (index scans off for its transaction) and inside a
// caller's transaction (the planner's choice, the setting left alone).

const t = await createTestDatabase();
defer(() => t.close());
await runDay(
  t.db,
  '2030-01-01',
  [1, 2, 3, 4, 5].map((n) => ({ n })),
);

const { rows: stored } = await sql<{ nip: string; source: string; fp: string }>`
  SELECT c.primary_identifier AS nip, s.key AS source, c.source_fingerprints ->> s.key AS fp
  FROM companies c CROSS JOIN LATERAL jsonb_object_keys(c.source_fingerprints) AS s(key) ORDER BY c.id`.execute(t.db);
const source = stored[0]!.source;

const items: BatchLookupItem[] = [
  { identifiers: [{ type: 'NIP', value: nipFor(3) }], fingerprint: 'different' },
  { identifiers: [{ type: 'NIP', value: nipFor(99) }], fingerprint: 'x' }, // unknown
  { identifiers: [{ type: 'NIP', value: nipFor(1) }], fingerprint: stored.find((s) => s.nip === nipFor(1))!.fp },
  { identifiers: [{ type: 'NIP', value: nipFor(3) }], fingerprint: 'again' }, // the same company twice in a batch
];

test('the lookup matches by identifier and carries the stored snapshot only when the fingerprint differs', async () => {
  const got = await lookupCompaniesForBatch(t.db, source, items);
  assert.equal(got.length, 4);
  assert.equal(got[1], null);
  assert.ok(got[0] && got[3] && got[2]);
  assert.equal(got[0].id, got[3].id);
  assert.equal(got[0].sameFingerprint, false);
  assert.equal(JSON.parse(got[0].snapshotJson!).identity.identifiers[0].value, nipFor(3));
  assert.equal(got[2].sameFingerprint, true);
  assert.equal(got[2].snapshotJson, null);
  assert.equal(got[2].status, 'ACTIVE');
  assert.equal(got[2].firstSeenDate, '2030-01-01');
  assert.equal(got[2].revision, 1);
  assert.match(got[2].contentHash, /^[A-Za-z0-9+/]+=*$/);
});

test("inside a caller's transaction: the same answer, and index scans stay on after it", async () => {
  const outside = await lookupCompaniesForBatch(t.db, source, items);
  const inside = await t.db.transaction().execute(async (trx) => {
    const r = await lookupCompaniesForBatch(trx, source, items);
    const { rows } = await sql<{ v: string }>`SELECT current_setting('enable_indexscan') AS v`.execute(trx);
    assert.equal(rows[0]!.v, 'on');
    return r;
  });
  assert.deepEqual(inside, outside);
});

test('no item known: no second query, every answer null', async () => {
  assert.deepEqual(await lookupCompaniesForBatch(t.db, source, [items[1]!]), [null]);
  assert.deepEqual(await lookupCompaniesForBatch(t.db, source, []), []);
});
