import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot } from './helpers/registry.ts';
import { waitFor } from './helpers/wait.ts';
import { runDaily } from '../src/registry/daily.ts';
import { seedSyntheticCompanies } from '../src/registry/demo.ts';
import { createSyntheticSource } from '../src/registry/sources/synthetic.ts';
import type { CompanySnapshot } from '../src/registry/model.ts';

/**
 * `regwatch seed --synthetic N` loads N companies (DECISIONS 1). Two seeds draw identifiers from
 * the same ranges, so next to a registry already holding companies (the demo's 50,000, a file's)
 * a generated company can share a REGON or a KRS with a stored one: it then became an update of
 * that stranger, with events, and the load added fewer than N.
 */

const DATE = '2026-11-10';

async function companyCount(db: TestDatabase): Promise<number> {
  return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`.execute(db.db)).rows[0]!.n;
}

async function firstGenerated(seed: string, count: number, at: number, date = DATE): Promise<CompanySnapshot> {
  let i = 0;
  for await (const s of createSyntheticSource({ seed, size: count }).allSnapshots(date)) if (i++ === at) return s;
  throw new Error('no such company');
}

/** A stored company (a file's) sharing the REGON of the generated company `at`, and nothing else. */
async function storeStranger(db: TestDatabase, seed: string, count: number, at: number, date = DATE): Promise<string> {
  const generated = await firstGenerated(seed, count, at, date);
  const regon = generated.identity.identifiers.find((x) => x.type === 'REGON9')!.value;
  const stranger = companySnapshot({ n: 424_242, withoutKrs: true, name: 'STRANGER SPÓŁKA Z O.O.' });
  stranger.identity.identifiers = stranger.identity.identifiers.map((x) => (x.type === 'REGON9' ? { ...x, value: regon } : x));
  assert.notEqual(
    stranger.identity.identifiers.find((x) => x.type === 'NIP')!.value,
    generated.identity.identifiers.find((x) => x.type === 'NIP')!.value,
  );
  await runDaily(db.db, { date: '2026-11-01', source: arraySource([stranger]) });
  return regon;
}

async function strangerName(db: TestDatabase, regon: string): Promise<string> {
  const { rows } = await sql<{ name: string }>`
    SELECT c.name FROM companies c JOIN company_identifiers ci ON ci.company_id = c.id
    WHERE ci.key = identifier_key('REGON9', ${regon})`.execute(db.db);
  return rows[0]!.name;
}

test('seed --synthetic N next to stored companies adds N new ones and leaves a stranger sharing an identifier alone', async () => {
  const db = await createTestDatabase();
  const regon = await storeStranger(db, 'collide', 300, 17);

  const summary = await seedSyntheticCompanies(db.db, { count: 300, seed: 'collide', date: DATE });
  assert.equal(summary.new, 300);
  assert.equal(summary.updated, 0);
  assert.equal(summary.events, 0);
  assert.equal(await companyCount(db), 301);
  assert.equal(await strangerName(db, regon), 'STRANGER SPÓŁKA Z O.O.');
  const events = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events`.execute(db.db);
  assert.equal(events.rows[0]!.n, 0);

  const again = await seedSyntheticCompanies(db.db, { count: 300, seed: 'collide', date: DATE });
  assert.equal(again.alreadyCompleted, true);
  assert.equal(await companyCount(db), 301);
});

test('an interrupted seed next to stored companies resumes to exactly N, its own companies unchanged', async () => {
  const db = await createTestDatabase();
  const regon = await storeStranger(db, 'resume', 20_000, 10);

  const stop = new AbortController();
  const loading = seedSyntheticCompanies(db.db, { count: 20_000, seed: 'resume', date: DATE, signal: stop.signal });
  await waitFor('the first batch', async () => (await companyCount(db)) > 1);
  stop.abort();
  await assert.rejects(loading);
  const partial = await companyCount(db);
  assert.ok(partial > 1 && partial < 20_001, `stopped midway: ${partial}`);

  const resumed = await seedSyntheticCompanies(db.db, { count: 20_000, seed: 'resume', date: DATE });
  assert.equal(resumed.resumed, true);
  assert.equal(resumed.new, 20_000);
  assert.equal(resumed.updated, 0);
  assert.equal(resumed.events, 0);
  assert.equal(await companyCount(db), 20_001);
  assert.equal(await strangerName(db, regon), 'STRANGER SPÓŁKA Z O.O.');
});

test("a substitute does not repeat an identifier of its own load's companies, stored or not yet", async () => {
  // Seed `inflight42` on this date: the first company of its substitute seed `inflight42:1` and
  // its own first company both became KRS forms, so both carry KRS 0050000000 (50,000,000 + index).
  const date = '2120-01-01';
  const [primary, substitute] = [await firstGenerated('inflight42', 300, 0, date), await firstGenerated('inflight42:1', 300, 0, date)];
  const krs = (s: CompanySnapshot) => s.identity.identifiers.find((x) => x.type === 'KRS')?.value;
  assert.equal(krs(primary), '0050000000');
  assert.equal(krs(substitute), '0050000000');

  const db = await createTestDatabase();
  const regon = await storeStranger(db, 'inflight42', 300, 100, date);
  const summary = await seedSyntheticCompanies(db.db, { count: 300, seed: 'inflight42', date });
  assert.equal(summary.new, 300);
  assert.equal(summary.events, 0);
  assert.equal(await companyCount(db), 301);
  assert.equal(await strangerName(db, regon), 'STRANGER SPÓŁKA Z O.O.');
});
