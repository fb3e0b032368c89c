import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/db.ts';
import { poolOf } from '../../db/database.ts';
import { transactionClient } from '../../db/pinned-connection.ts';
import { copyCompanies, insertCompanies, insertIdentifiers, type IdentifierRow } from './companies-repo.ts';
import { companyRow, FIELD_SEP, NULL_FIELD, type NewCompanyRow } from './company-rows.ts';
import { companyCopyData, pgDateDays } from './company-copy.ts';
import { contentHash } from './content-hash.ts';

// The binary COPY of a first load (company-copy.ts) must store exactly what the INSERT path
// (insertCompanies, insertIdentifiers) stores from the same rows: every column type, NULLs,
// arrays, multi-byte text, dates, jsonb and bytea, checked against a real PostgreSQL.

const N = NULL_FIELD;

/** companyRowFields' 17 fields, given as they travel (NULL_FIELD for NULL). */
function fields(f: {
  pit?: string;
  pi: string;
  name: string;
  status?: string;
  hashOf: string;
  fp?: string;
  nameFolded?: string;
  city?: string;
  voiv?: string;
  postal?: string;
  legal?: string;
  codes?: string;
  main?: string;
  start?: string;
  phone?: string;
  email?: string;
  fax?: string;
}): string {
  const hash = contentHash(Buffer.from(f.hashOf)).toString('base64');
  return [
    f.pit ?? 'NIP',
    f.pi,
    f.name,
    f.status ?? 'ACTIVE',
    hash,
    f.fp ?? hash,
    f.nameFolded ?? f.name.toLowerCase(),
    f.city ?? N,
    f.voiv ?? N,
    f.postal ?? N,
    f.legal ?? N,
    f.codes ?? '',
    f.main ?? N,
    f.start ?? N,
    f.phone ?? 'f',
    f.email ?? 'f',
    f.fax ?? 'f',
  ].join(FIELD_SEP);
}

const SNAPSHOTS = [
  '{"identity":{"identifiers":[]},"name":"ZAŻÓŁĆ GĘŚLĄ JAŹŃ 🚀","note":"\\u0000\\u001f\\"quoted\\"\\n"}',
  '{}',
  '{"a":[1,2.5,-3e10,true,false,null],"b":{"c":"ż"}}',
];

/** Rows in all three forms a row takes (worker bytes, text, bytes apart), across every column's kinds of value. */
function sampleRows(): NewCompanyRow[] {
  const specs: [string, string][] = [
    [
      SNAPSHOTS[0]!,
      fields({
        pi: '5261040828',
        name: 'ZAŻÓŁĆ  GĘŚLĄ 🚀',
        hashOf: 'a',
        city: 'łódź',
        voiv: 'łódzkie',
        postal: '90-001',
        legal: 'SPÓŁKA',
        codes: '6201Z',
        main: '6201Z',
        start: '2015-03-10',
        phone: 't',
        email: 't',
        fax: 't',
      }),
    ],
    [
      SNAPSHOTS[1]!,
      fields({
        pit: 'KRS',
        pi: '0000012345',
        name: 'Ä',
        status: 'DELETED',
        hashOf: 'b',
        fp: 'AAAA',
        codes: '6201Z,4711Z,,x',
        start: '2000-01-01',
      }),
    ],
    [
      SNAPSHOTS[2]!,
      fields({
        pit: 'REGON9',
        pi: '123456785',
        name: '"quote" \\ backslash, comma {brace}',
        status: 'SUSPENDED',
        hashOf: 'c',
        codes: 'a,',
        start: '1999-12-31',
        email: 't',
      }),
    ],
    [SNAPSHOTS[0]!, fields({ pi: '1', name: '', nameFolded: '', hashOf: 'd', codes: '', start: '2024-02-29', city: '', postal: '' })],
    [SNAPSHOTS[1]!, fields({ pi: '2', name: '日本語 テキスト', hashOf: 'e', codes: ',', start: '0001-01-01', main: 'ż' })],
    [SNAPSHOTS[2]!, fields({ pi: '3', name: 'x'.repeat(5000), hashOf: 'f', codes: 'ąę,śćź,🚀', start: '9999-12-31', fax: 't' })],
  ];
  return specs.map(([snapshot, f], i) => {
    // Ids above 2^32, and the largest bigint (beyond a number's exact range).
    const id = i === 5 ? '9223372036854775807' : String(900_000_000_000 + i);
    if (i % 3 === 0) return { id, row: Buffer.from(companyRow(snapshot, f), 'utf8') };
    if (i % 3 === 1) return { id, row: { snapshot, fields: f } };
    return { id, row: { snapshot: Buffer.from(snapshot, 'utf8'), fields: Buffer.from(f, 'utf8') } };
  });
}

async function dump(t: TestDatabase) {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT id, primary_identifier_type, primary_identifier, name, status, snapshot, encode(content_hash, 'hex') AS hash,
      source_fingerprints::text AS fingerprints, revision, name_folded, city_folded, voivodeship_folded, postal_code, legal_form,
      activity_codes::text AS codes, array_length(activity_codes, 1) AS codes_length, main_activity, activity_start::text AS start,
      has_phone, has_email, has_fax, first_seen_date::text AS first_seen, last_changed_date::text AS last_changed
    FROM companies ORDER BY id`.execute(t.db);
  const counts = await sql`SELECT first_seen_date::text AS d, companies FROM company_counts ORDER BY 1`.execute(t.db);
  return { rows, counts: counts.rows };
}

/** Writes `rows` twice (two batches, as a load's do) through COPY or INSERT on a fresh database. */
async function store(copy: boolean): Promise<Awaited<ReturnType<typeof dump>>> {
  const t = await createTestDatabase();
  const rows = sampleRows();
  for (const batch of [rows.slice(0, 4), rows.slice(4)]) {
    await t.db.transaction().execute(async (trx) => {
      if (!copy) return insertCompanies(trx, 'src "ż"', '2026-11-01', batch);
      const client = await transactionClient(poolOf(t.db), trx);
      assert.ok(client, 'the transaction has a client');
      await copyCompanies(trx, client, 'src "ż"', '2026-11-01', batch);
    });
  }
  return dump(t);
}

test('binary COPY stores exactly the rows INSERT stores, every column type', async () => {
  const copied = await store(true);
  const inserted = await store(false);
  assert.deepEqual(copied, inserted);
  // And the values are the ones meant, not merely equal.
  const r = copied.rows;
  assert.equal(r.length, 6);
  assert.deepEqual(copied.counts, [{ d: '2026-11-01', companies: '6' }]);
  assert.equal(r[0]!.snapshot, SNAPSHOTS[0]);
  assert.equal(r[0]!.name, 'ZAŻÓŁĆ  GĘŚLĄ 🚀');
  assert.equal(r[0]!.codes, '{6201Z}');
  assert.equal(r[0]!.start, '2015-03-10');
  assert.deepEqual([r[0]!.has_phone, r[0]!.has_email, r[0]!.has_fax], [true, true, true]);
  assert.equal(r[0]!.hash, contentHash(Buffer.from('a')).toString('hex'));
  assert.deepEqual(JSON.parse(r[0]!.fingerprints as string), { 'src "ż"': contentHash(Buffer.from('a')).toString('base64') });
  assert.equal(r[0]!.revision, 1);
  assert.equal(r[0]!.last_changed, null);
  assert.equal(r[1]!.codes, '{6201Z,4711Z,"",x}');
  assert.equal(r[1]!.city_folded, null);
  assert.equal(r[1]!.start, '2000-01-01');
  assert.equal(r[2]!.codes, '{a,""}');
  assert.equal(r[2]!.start, '1999-12-31');
  assert.equal(r[3]!.codes, '{}');
  assert.equal(r[3]!.codes_length, null);
  assert.equal(r[3]!.city_folded, '');
  assert.equal(r[3]!.start, '2024-02-29');
  assert.equal(r[4]!.codes, '{"",""}');
  assert.equal(r[4]!.start, '0001-01-01');
  assert.equal(r[4]!.name, '日本語 テキスト');
  assert.equal(r[5]!.codes, '{ąę,śćź,🚀}');
  assert.equal(r[5]!.start, '9999-12-31');
  assert.equal((r[5]!.name as string).length, 5000);
  assert.equal(r[5]!.id, '9223372036854775807');
  assert.equal(r[0]!.id, '900000000000');
  for (const x of r) assert.equal(x.first_seen, '2026-11-01');
});

test('a NOT NULL column given NULL fails the COPY as it fails the INSERT, and the transaction rolls back', async () => {
  const t = await createTestDatabase();
  const bad: NewCompanyRow[] = [{ id: '1', row: { snapshot: '{}', fields: fields({ pi: '1', name: N, hashOf: 'z' }) } }];
  for (const copy of [true, false]) {
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        if (!copy) return insertCompanies(trx, 's', '2026-11-01', bad);
        await copyCompanies(trx, (await transactionClient(poolOf(t.db), trx))!, 's', '2026-11-01', bad);
      }),
      (e: { code?: string }) => e.code === '23502',
    );
  }
  assert.deepEqual((await dump(t)).rows, []);
  // The connection is fine afterwards.
  assert.equal((await sql<{ n: number }>`SELECT 1 AS n`.execute(t.db)).rows[0]!.n, 1);
});

test('pgDateDays: days since 2000-01-01 as PostgreSQL counts them, and what ::date refuses', async () => {
  const t = await createTestDatabase();
  for (const d of ['2000-01-01', '1999-12-31', '1970-01-01', '2024-02-29', '1900-03-01', '0001-01-01', '9999-12-31', '2026-11-27']) {
    const { rows } = await sql<{ days: number }>`SELECT ${d}::date - '2000-01-01'::date AS days`.execute(t.db);
    assert.equal(pgDateDays(d), rows[0]!.days, d);
  }
  for (const d of ['2023-02-29', '2021-13-01', '2021-00-10', '2021-04-31', '0000-01-01', '', 'x']) {
    assert.throws(() => pgDateDays(d), /date/, d);
    await assert.rejects(sql`SELECT ${d}::date`.execute(t.db), d);
  }
  // Only YYYY-MM-DD: the only form deriveCompanyColumns lets through (PostgreSQL would read this one).
  assert.throws(() => pgDateDays('2020-1-5'), /date/);
});

test('identifiers by COPY: stored in key order; one another company holds falls back to the row-by-row insert', async () => {
  const t = await createTestDatabase();
  await insertCompanies(t.db, 's', '2026-11-01', sampleRows().slice(0, 2));
  const [a, b] = sampleRows().map((r) => r.id);
  const ident = (companyId: string, type: IdentifierRow['type'], value: string): IdentifierRow => ({ companyId, type, value });
  await t.db.transaction().execute(async (trx) => {
    const client = (await transactionClient(poolOf(t.db), trx))!;
    const lost = await insertIdentifiers(trx, [ident(a!, 'NIP', '5261040828'), ident(a!, 'KRS', '0000012345')], client);
    assert.deepEqual(lost, []);
  });
  await t.db.transaction().execute(async (trx) => {
    const client = (await transactionClient(poolOf(t.db), trx))!;
    // The NIP is company a's: COPY fails on the unique key, the savepoint undoes it, and the rest goes in.
    const lost = await insertIdentifiers(trx, [ident(b!, 'REGON9', '123456785'), ident(b!, 'NIP', '5261040828')], client);
    assert.deepEqual(lost, [ident(b!, 'NIP', '5261040828')]);
    // The transaction and its client go on.
    await client.query('SELECT 1');
  });
  const { rows } = await sql<{
    key: string;
    company_id: string;
  }>`SELECT key::text, company_id::text FROM company_identifiers ORDER BY key`.execute(t.db);
  assert.deepEqual(
    rows.map((r) => r.company_id),
    [a, b, a],
  );
});

test('transactionClient: the client the transaction runs on; none for a pool nobody tracks', async () => {
  const t = await createTestDatabase();
  await t.db.transaction().execute(async (trx) => {
    await sql`CREATE TEMP TABLE seen_here (x int) ON COMMIT DROP`.execute(trx);
    const client = await transactionClient(poolOf(t.db), trx);
    assert.ok(client);
    // Only this transaction sees its temporary table, uncommitted.
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM seen_here');
    assert.equal(rows[0]!.n, '0');
  });
  const untracked = new pg.Pool({ connectionString: t.url, max: 1 });
  try {
    await t.db.transaction().execute(async (trx) => assert.equal(await transactionClient(untracked, trx), undefined));
    await t.db.transaction().execute(async (trx) => assert.equal(await transactionClient(undefined, trx), undefined));
  } finally {
    await untracked.end();
  }
});

test('a row of too few or too many fields is refused before anything is sent', () => {
  const f = fields({ pi: '1', name: 'A', hashOf: 'a' });
  const parts = f.split(FIELD_SEP);
  assert.equal(parts.length, 17);
  const encode = (text: string) => companyCopyData('s', '2026-11-01', [{ id: '1', row: Buffer.from(companyRow('{}', text)) }]);
  assert.ok(encode(f).length > 0);
  assert.throws(() => encode(parts.slice(0, 16).join(FIELD_SEP)), /16 fields, not 17/);
  assert.throws(() => encode(f + FIELD_SEP + 'x'), /more than 17 fields/);
  assert.throws(
    () => encode(f.replace(`${FIELD_SEP}f${FIELD_SEP}f${FIELD_SEP}f`, `${FIELD_SEP}f${FIELD_SEP}true${FIELD_SEP}f`)),
    /boolean: "true"/,
  );
});
