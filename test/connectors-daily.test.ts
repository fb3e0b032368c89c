import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createTestDatabase } from './helpers/db.ts';
import { defer } from './helpers/cleanup.ts';
import { jsonReply, problemReply, readFixtureJson, startFixtureServer } from './helpers/fixture-server.ts';
import { storedIdentifierKey } from '../src/lib/identifiers.ts';

const BIN = new URL('../bin/regwatch.js', import.meta.url).pathname;
const KRS = '0001268296';
const EXTRACT = 'krs/odpis-aktualny-P-0001268296-spzoo-nowa.json';

/**
 * The whole path a real KRS day takes: `regwatch daily --source krs` reads the day's bulletin
 * from a local server replaying the Ministry's payloads, fetches every listed extract again,
 * stores the company (day 1), then detects the changes of a later extract as events (day 2).
 */
test('a bulletin-driven KRS daily run, end to end through the CLI, produces the expected events', async () => {
  const db = await createTestDatabase();
  const day1 = readFixtureJson(EXTRACT) as {
    odpis: { dane: { dzial1: { danePodmiotu: { nazwa: string }; siedzibaIAdres: { adres: Record<string, string> } } } };
  };
  const day2 = structuredClone(day1);
  day2.odpis.dane.dzial1.danePodmiotu.nazwa = 'GYM CENTER 9.0 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ';
  day2.odpis.dane.dzial1.siedzibaIAdres.adres.ulica = 'UL. NOWA';
  day2.odpis.dane.dzial1.siedzibaIAdres.adres.nrDomu = '5';
  let current: unknown = day1;
  const server = await startFixtureServer((req) => {
    if (req.path === '/api/krs/Biuletyn/2026-09-22' || req.path === '/api/krs/Biuletyn/2026-09-23') return jsonReply(['1268296']);
    if (req.path === `/api/krs/OdpisAktualny/${KRS}` && req.query.get('rejestr') === 'P') return jsonReply(current);
    return problemReply('krs/odpis-aktualny-not-found-404.json');
  });
  defer(() => server.close());

  const run = (date: string) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'daily', '--date', date, '--source', 'krs'], {
        env: { ...process.env, DATABASE_URL: db.url, KRS_API_URL: `${server.url}/api/krs/`, REGISTRY_SOURCES: '', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        out += d;
      });
      child.on('exit', (code) => resolve({ code, out }));
    });

  const first = await run('2026-09-22');
  assert.equal(first.code, 0, first.out);
  assert.match(first.out, /new\D+1\b/i);
  const company = await db.db
    .selectFrom('company_identifiers')
    .select('company_id')
    .where('key', '=', storedIdentifierKey('KRS', KRS))
    .executeTakeFirst();
  assert.ok(company, 'the company is stored under its KRS number');
  const byNip = await db.db
    .selectFrom('company_identifiers')
    .select('company_id')
    .where('key', '=', storedIdentifierKey('NIP', '9452336418'))
    .executeTakeFirst();
  assert.equal(byNip?.company_id, company.company_id, 'and found by its NIP from the extract');

  current = day2;
  const second = await run('2026-09-23');
  assert.equal(second.code, 0, second.out);
  const events = await db.db
    .selectFrom('events')
    .select(['event_type', 'old_value', 'new_value', 'event_date', 'severity'])
    .where('company_id', '=', company.company_id)
    .orderBy('id')
    .execute();
  const byType = new Map(events.map((e) => [e.event_type, e]));
  assert.deepEqual(byType.get('COMPANY_NAME_CHANGED'), {
    event_type: 'COMPANY_NAME_CHANGED',
    old_value: 'GYM CENTER 8.0 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    new_value: 'GYM CENTER 9.0 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    event_date: '2026-09-23',
    severity: 'info',
  });
  const addr = byType.get('COMPANY_REGISTERED_ADDRESS_CHANGED');
  assert.ok(addr, `address event among ${events.map((e) => e.event_type).join(', ')}`);
  assert.match(addr.old_value ?? '', /OSTATNIA 1D, 31-444 KRAK/i);
  assert.match(addr.new_value ?? '', /NOWA 5, 31-444 KRAK/i);
  assert.equal(events.length, 2, `exactly the two changes: ${JSON.stringify(events)}`);

  // The same day again adds nothing.
  const again = await run('2026-09-23');
  assert.equal(again.code, 0, again.out);
  const after = await db.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  assert.equal(Number(after.n), 2);
});

test("a registry that is down on a day is recorded as that day's failed run; repeating the run later completes it", async () => {
  const db = await createTestDatabase();
  let down = true;
  const server = await startFixtureServer((req) => {
    if (down) return { status: 503, body: 'Service Unavailable' };
    if (req.path === '/api/krs/Biuletyn/2026-09-24') return jsonReply(['1268296']);
    if (req.path === `/api/krs/OdpisAktualny/${KRS}` && req.query.get('rejestr') === 'P') return jsonReply(readFixtureJson(EXTRACT));
    return problemReply('krs/odpis-aktualny-not-found-404.json');
  });
  defer(() => server.close());
  const run = () =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'daily', '--date', '2026-09-24', '--source', 'krs'], {
        env: { ...process.env, DATABASE_URL: db.url, KRS_API_URL: server.url + '/api/krs', REGISTRY_SOURCES: '', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        out += d;
      });
      child.on('exit', (code) => resolve({ code, out }));
    });
  const failed = await run();
  assert.notEqual(failed.code, 0, failed.out);
  const runRow = await db.db.selectFrom('daily_runs').selectAll().where('run_date', '=', '2026-09-24').executeTakeFirstOrThrow();
  assert.equal(runRow.status, 'failed');
  assert.match(runRow.error ?? '', /krs/i);

  down = false;
  const ok = await run();
  assert.equal(ok.code, 0, ok.out);
  const done = await db.db.selectFrom('daily_runs').selectAll().where('run_date', '=', '2026-09-24').execute();
  assert.equal(done.length, 1);
  assert.equal(done[0].status, 'completed');
  assert.equal(Number(done[0].new_count), 1);
});
