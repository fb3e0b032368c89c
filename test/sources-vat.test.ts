import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { JobHelpers } from 'graphile-worker';
import { defer } from './helpers/cleanup.ts';
import { bearer, createAccount, createManualClock, createTestApp, drainQueues } from './helpers/app.ts';
import { jsonFixtureReply, jsonReply, readFixtureJson, startFixtureServer } from './helpers/fixture-server.ts';
import { createRegistryJobs, DAILY_TICK_TASK } from '../src/registry/jobs.ts';

/**
 * The scheduled daily run of the VAT white list re-checks every watched company's NIP, so VAT
 * events reach the watchers' feed without anyone running `--source vat`: a company is watched
 * (imported from the white list's replayed answer), then the list says it is exempt and has
 * fewer accounts; the next scheduled run turns that into events on the feed.
 */

const DIR = 'vat-whitelist/';
const NIP = '7740001454';
type Entry = { identifier: string; subjects?: Array<{ statusVat: string; accountNumbers: string[] }> };
const recorded = readFixtureJson(`${DIR}search-nips-mixed-notfound-invalid-czynny-niezarejestrowany.json`) as {
  result: { entries: Entry[] };
};
const orlen = recorded.result.entries.find((e) => e.identifier === NIP)!.subjects![0]!;

let vatStatus = 'Czynny';
let accounts = orlen.accountNumbers;
const server = await startFixtureServer((req) => {
  if (req.path === `/api/search/nip/${NIP}`) return jsonFixtureReply(`${DIR}search-nip-${NIP}-orlen-czynny.json`);
  if (req.path.startsWith('/api/search/nips/')) {
    const asked = req.path.slice('/api/search/nips/'.length).split(',');
    return jsonReply({
      result: {
        entries: asked.map((identifier) =>
          identifier === NIP
            ? { identifier, subjects: [{ ...orlen, statusVat: vatStatus, accountNumbers: accounts }] }
            : { identifier, subjects: [] },
        ),
        requestId: `req-${req.query.get('date')}`,
        requestDateTime: '12-11-2026 03:00:01',
      },
    });
  }
  return { status: 404 };
});
defer(() => server.close());

const clock = createManualClock('2026-11-10T09:00:00Z');
const t = await createTestApp({ clock, env: { REGISTRY_SOURCES: 'vat', VAT_API_URL: server.url } });
const jobs = createRegistryJobs({ config: t.config, db: t.db.db, logger: pino({ level: 'silent' }), clock });

async function tickAndWork(day: string): Promise<void> {
  clock.set(`${day}T03:00:00Z`);
  await jobs.tasks[DAILY_TICK_TASK]!({ _cron: { ts: `${day}T03:00:00.000Z` } }, {} as JobHelpers);
  await drainQueues(t);
}

test('a watched company whose VAT status and accounts change on the white list gets both events from the scheduled run', async () => {
  const acct = await createAccount(t);
  const add = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: bearer(acct.master),
    payload: { identifier_type: 'NIP', identifier_value: [NIP] },
  });
  assert.equal(add.statusCode, 202, add.body);
  await drainQueues(t); // the on-demand import from the white list, then the watch
  const watched = (await t.app.inject({ method: 'GET', url: '/api/v1/companies/watched', headers: bearer(acct.master) })).json();
  assert.equal(watched.data.length, 1, JSON.stringify(watched));

  // 2026-11-10: the list says what it said at the import: nothing to report.
  await tickAndWork('2026-11-11');
  const asked = server.requests.filter((r) => r.path.startsWith('/api/search/nips/'));
  assert.deepEqual(
    asked.map((r) => [r.path, r.query.get('date')]),
    [[`/api/search/nips/${NIP}`, '2026-11-10']],
    'the scheduled run asked for the watched NIP',
  );

  // 2026-11-11: exempt, and two accounts fewer.
  vatStatus = 'Zwolniony';
  accounts = orlen.accountNumbers.slice(2);
  await tickAndWork('2026-11-12');

  const feed = await t.app.inject({ method: 'GET', url: '/api/v1/watchlist/events', headers: bearer(acct.master) });
  assert.equal(feed.statusCode, 200, feed.body);
  const events = feed.json().data as Array<{
    event_type: string;
    old_value: string | null;
    new_value: string | null;
    event_date: string;
    primary_identifier: string;
  }>;
  const vat = events.find((e) => e.event_type === 'COMPANY_VAT_STATUS_CHANGED');
  assert.deepEqual(vat && { old: vat.old_value, new: vat.new_value, date: vat.event_date }, {
    old: 'Czynny',
    new: 'Zwolniony',
    date: '2026-11-11',
  });
  const bank = events.find((e) => e.event_type === 'COMPANY_BANK_ACCOUNTS_CHANGED');
  assert.ok(bank, `bank accounts event among ${events.map((e) => e.event_type).join(', ')}`);
  assert.equal(bank.event_date, '2026-11-11');
  assert.equal(bank.new_value, [...accounts].sort().join(', '));

  const sources = (await t.app.inject({ method: 'GET', url: '/api/v1/sources' })).json().data as Array<{
    source: string;
    health: string;
    last_completed_date: string;
    companies: number;
    last_run: { events: number };
  }>;
  const vatSource = sources.find((s) => s.source === 'vat')!;
  assert.equal(vatSource.last_completed_date, '2026-11-11');
  assert.equal(vatSource.companies, 1);
  assert.ok(vatSource.last_run.events >= 2);
});
