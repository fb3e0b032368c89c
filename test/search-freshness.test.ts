import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { runDaily } from '../src/registry/daily.ts';
import { parseSearchQuery } from '../src/modules/companies/filters.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { freePort } from './helpers/net.ts';
import { bearer, createAccount, createTestApp, type TestApp } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor, writeNdjson } from './helpers/registry.ts';

/**
 * DECISIONS 9, freshness: a search that starts after `regwatch daily` (a separate process) has
 * exited reflects that run when it changed up to the delta threshold (here 10 companies), with
 * `data_as_of` the run's date; a larger run is applied by a rebuild, and until it is in, answers
 * say the older `data_as_of` and show the older data, never a mix.
 */

const MAX_DELTA = 10;
const dir = mkdtempSync(join(tmpdir(), 'regwatch-freshness-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const bin = join(import.meta.dirname, '..', 'bin', 'regwatch.js');

function regwatchDaily(db: TestDatabase, date: string, file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'daily', '--date', date, '--source', `file:${file}`], {
      env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: 'warn', REGISTRY_SOURCES: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface SearchData {
  total: number;
  data_as_of: string | null;
  results: { name: string; city: string | null; status: string; identifiers: { type: string; value: string }[] }[];
}

describe('searches reflect each finished run (regwatch daily in a subprocess)', () => {
  let db: TestDatabase;
  let t: TestApp;
  let engine: CompanySearchEngine;
  let auth: { authorization: string };

  const search = async (query: string): Promise<SearchData> => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/companies/search?${query}`, headers: auth });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data;
  };
  const daily = async (date: string, file: string) => {
    const r = await regwatchDaily(db, date, file);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };

  after(() => engine.stop());
  before(async () => {
    db = await createTestDatabase();
    await daily(
      '2026-11-01',
      writeNdjson(
        join(dir, 'day1.ndjson'),
        Array.from({ length: 20 }, (_, i) => companySnapshot({ n: i + 1 })),
      ),
    );
    // Following only when searched (no timer), so nothing but the search itself can bring the index up to date.
    engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), maxDelta: MAX_DELTA, followEveryMs: 0 });
    t = await createTestApp({ db, overrides: { companySearch: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    await engine.refresh();
    assert.equal(engine.status().engine, 'memory');
    const account = await createAccount(t);
    auth = bearer(account.master);
    const { id } = await db.db.selectFrom('accounts').select('id').where('user_ref', '=', account.userRef).executeTakeFirstOrThrow();
    await applyLedgerEntry(db.db, { accountId: id, type: 'deposit', amount: 10_000, description: 'test top-up' });
    const first = await search('city=lodz');
    assert.deepEqual([first.total, first.data_as_of], [20, '2026-11-01']);
  });

  test('a small run (a delta): every new, changed and deleted company at once, with filters and q; snapshot meta too', async () => {
    const builtAt = engine.status().builtAt;
    const day2 = writeNdjson(join(dir, 'day2.ndjson'), [
      ...[101, 102, 103].map((n) =>
        companySnapshot({
          n,
          name: `NOWA ALFA ${n} SPÓŁKA AKCYJNA`,
          legalForm: 'SPÓŁKA AKCYJNA',
          city: 'Gdańsk',
          postalCode: '80-001',
          voivodeship: 'pomorskie',
          activities: [{ code: '4941Z', name: 'Transport drogowy towarów', is_primary: true }],
        }),
      ),
      companySnapshot({
        n: 1,
        name: 'ZMIENIONA BETA SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
        city: 'Kraków',
        postalCode: '30-001',
        voivodeship: 'małopolskie',
      }),
      companySnapshot({
        n: 2,
        status: 'wykreślony',
        dates: [
          { type: 'registration', date: '2015-03-02' },
          { type: 'activity_start', date: '2015-03-10' },
          { type: 'deletion', date: '2026-11-02' },
        ],
      }),
    ]);
    assert.match(await daily('2026-11-02', day2), /new=3 updated=2 deleted=1/);

    // Right after the process exited: no refresh, no wait.
    const added = await search('q=nowa+alfa&city=Gda%C5%84sk&activity_code=49.41.Z&voivodeship=pomorskie&postal_code=80-001');
    assert.equal(added.data_as_of, '2026-11-02');
    assert.deepEqual(
      added.results.map((r) => r.name).sort(),
      [101, 102, 103].map((n) => `NOWA ALFA ${n} SPÓŁKA AKCYJNA`),
    );
    const renamed = await search('q=zmieniona+beta&city=krakow');
    assert.deepEqual([renamed.total, renamed.results[0]?.city, renamed.data_as_of], [1, 'Kraków', '2026-11-02']);
    assert.equal((await search('city=lodz')).total, 18, 'the renamed company left Łódź and the deleted one is not ACTIVE');
    const deleted = await search('status=DELETED');
    assert.deepEqual(
      deleted.results.map((r) => r.identifiers.find((i) => i.type === 'NIP')?.value),
      [nipFor(2)],
    );
    assert.equal(engine.status().builtAt, builtAt, 'applied as a delta, not rebuilt');

    const snapshot = await t.app.inject({
      method: 'POST',
      url: '/api/v1/companies/snapshot',
      headers: auth,
      payload: { identifier_type: 'NIP', identifier_value: nipFor(101) },
    });
    assert.equal(snapshot.statusCode, 200, snapshot.body);
    assert.equal(snapshot.json().meta.data_as_of, '2026-11-02');
  });

  test('a run above the delta threshold: the older data_as_of with the older data until the rebuild is in, never a mix', async () => {
    const builtAt = engine.status().builtAt;
    const renamedNs = Array.from({ length: MAX_DELTA + 5 }, (_, i) => i + 3);
    const day3 = writeNdjson(
      join(dir, 'day3.ndjson'),
      renamedNs.map((n) =>
        companySnapshot({
          n,
          name: `HURTOWNIA ${n} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ`,
          city: 'Opole',
          postalCode: '45-001',
          voivodeship: 'opolskie',
        }),
      ),
    );
    assert.match(await daily('2026-11-03', day3), new RegExp(`updated=${renamedNs.length}`));

    // Each answer is one state: before the run (2026-11-02: no HURTOWNIA, 18 in Łódź) or after it
    // (2026-11-03: every one of them in Opole, 3 left in Łódź).
    const states = new Set<string>();
    const check = async () => {
      const [hurt, lodz] = await Promise.all([search('q=hurtownia&city=opole'), search('city=lodz')]);
      for (const d of [hurt, lodz]) states.add(d.data_as_of!);
      for (const [d, before, after] of [
        [hurt, 0, renamedNs.length],
        [lodz, 18, 3],
      ] as const) {
        if (d.data_as_of === '2026-11-02') assert.equal(d.total, before, `as of 2026-11-02: ${JSON.stringify(d)}`);
        else if (d.data_as_of === '2026-11-03') assert.equal(d.total, after, `as of 2026-11-03: ${JSON.stringify(d)}`);
        else assert.fail(`unexpected data_as_of ${d.data_as_of}`);
      }
      return hurt.data_as_of === '2026-11-03' && lodz.data_as_of === '2026-11-03';
    };
    const first = await search('q=hurtownia&city=opole');
    assert.deepEqual(
      [first.data_as_of, first.total],
      ['2026-11-02', 0],
      'the first search starts the rebuild and answers from before the run',
    );
    const deadline = Date.now() + 30_000;
    while (!(await check())) {
      assert.ok(Date.now() < deadline, 'the rebuild is in within 30 s');
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(states.has('2026-11-03'));
    assert.notEqual(engine.status().builtAt, builtAt, 'rebuilt');
    assert.equal(engine.status().delta, 0);
  });
});

test(
  'the production start (bin/regwatch.js serve, tsx registered by the binary) builds the index in a worker thread',
  { timeout: 120_000 },
  async () => {
    const db = await createTestDatabase();
    await regwatchDaily(
      db,
      '2026-11-01',
      writeNdjson(
        join(dir, 'serve.ndjson'),
        [1, 2, 3].map((n) => companySnapshot({ n })),
      ),
    );
    const port = await freePort();
    const child = spawn(process.execPath, [bin, 'serve'], {
      env: { ...process.env, DATABASE_URL: db.url, PORT: String(port), LOG_LEVEL: 'info', REGISTRY_SOURCES: '', ROLE: 'api' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const deadline = Date.now() + 90_000;
      while (!/search index (built|build failed)/.test(out)) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `no build within 90 s: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const line = JSON.parse(out.split('\n').find((l) => /search index (built|build failed)/.test(l))!);
      assert.deepEqual([line.msg, line.in, line.companies, line.data_as_of], ['search index built', 'worker', 3, '2026-11-01'], out);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  },
);

test(
  'rows read ahead from a run in progress: its completion reads only the rest, and never brings back an older state',
  { timeout: 120_000 },
  async () => {
    const db = await createTestDatabase();
    await runDaily(db.db, {
      date: '2026-11-01',
      source: arraySource([1, 2, 3, 4].map((n) => companySnapshot({ n }))),
      sourceKey: 'file:base',
    });
    const engine = createCompanySearchEngine({ db: db.db, logger: pino({ level: 'silent' }), followEveryMs: 20 });
    try {
      await engine.refresh();
      engine.start();
      const names = async (q: string) => await engine.search(parseSearchQuery({ q }).filters, 0, 20);
      const renamed = (n: number, name: string) => companySnapshot({ n, name: `${name} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ` });
      // A run that commits two batches (companies 1 and 2), then waits (its reader holds the next
      // line back, so a third one is sent before the gate).
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const slow = {
        name: 'file' as const,
        async *snapshotsForDate() {
          yield renamed(1, 'WCZESNA JEDEN');
          yield renamed(2, 'WCZESNA DWA');
          yield renamed(4, 'WCZESNA CZTERY');
          await gate;
          yield renamed(3, 'WCZESNA TRZY');
        },
      };
      const running = runDaily(db.db, { date: '2026-11-02', source: slow, sourceKey: 'file:slow', batchSize: 1 });
      const deadline = Date.now() + 30_000;
      while (engine.status().readAhead < 2) {
        assert.ok(Date.now() < deadline, `nothing read ahead: ${JSON.stringify(engine.status())}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal((await names('wczesna')).total, 0, 'a run in progress is not in the answers');
      // Another run renames company 1 again and finishes first: its state is the newest.
      await runDaily(db.db, { date: '2026-11-02', source: arraySource([renamed(1, 'POZNA JEDEN')]), sourceKey: 'file:other' });
      assert.deepEqual([(await names('pozna jeden')).total, (await names('wczesna')).total], [1, 0]);
      release();
      await running;
      const after = await names('wczesna');
      assert.equal(after.dataAsOf, '2026-11-02');
      assert.equal(after.total, 3, 'companies 2, 3 and 4 from the slow run');
      assert.equal((await names('pozna jeden')).total, 1, 'company 1 keeps the newer state, not the one read ahead');
      assert.equal(engine.status().readAhead, 0);
    } finally {
      await engine.stop();
    }
  },
);
