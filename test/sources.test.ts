import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import type { JobHelpers } from 'graphile-worker';
import { createTestDatabase } from './helpers/db.ts';
import { defer } from './helpers/cleanup.ts';
import { createManualClock, createTestApp, drainQueues } from './helpers/app.ts';
import { jsonReply, problemReply, readFixtureJson, startFixtureServer } from './helpers/fixture-server.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRegistryJobs, DAILY_TICK_TASK } from '../src/registry/jobs.ts';
import { runDaily } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { companySnapshot, writeNdjson } from './helpers/registry.ts';

/**
 * GET /api/v1/sources over real scheduled runs: the daily tick and the worker's jobs run the KRS
 * connector against a local server replaying the Ministry's payloads, on a manual clock. The
 * registry answers, then is down for a day, then the worker misses a day; the next tick catches
 * both days up, oldest first.
 */

const KRS = '0001268296';
const EXTRACT = 'krs/odpis-aktualny-P-0001268296-spzoo-nowa.json';

const db = await createTestDatabase();
let down = false;
const server = await startFixtureServer((req) => {
  if (down) return { status: 503, body: 'Service Unavailable' };
  if (req.path.startsWith('/api/krs/Biuletyn/')) return jsonReply(['1268296']);
  if (req.path === `/api/krs/OdpisAktualny/${KRS}` && req.query.get('rejestr') === 'P') return jsonReply(readFixtureJson(EXTRACT));
  return problemReply('krs/odpis-aktualny-not-found-404.json');
});
defer(() => server.close());

const clock = createManualClock('2026-11-11T03:00:00Z');
const env = { REGISTRY_SOURCES: 'krs', KRS_API_URL: `${server.url}/api/krs` };
const t = await createTestApp({ db, clock, env });
const logger = pino({ level: 'silent' });
const jobs = createRegistryJobs({ config: t.config, db: db.db, logger, clock });

/** The 03:00 UTC tick of `day`, then the worker until the queue is empty. */
async function tickAndWork(day: string): Promise<void> {
  clock.set(`${day}T03:00:00Z`);
  await jobs.tasks[DAILY_TICK_TASK]!({ _cron: { ts: `${day}T03:00:00.000Z` } }, {} as JobHelpers);
  await drainQueues(t);
}

interface SourceEntry {
  source: string;
  configured: boolean;
  health: string;
  last_completed_date: string | null;
  last_run: null | {
    date: string;
    status: string;
    started_at: string;
    finished_at: string | null;
    new: number;
    updated: number;
    deleted: number;
    events: number;
  };
  gaps: string[];
  companies: number;
}

async function sources(at: string): Promise<Map<string, SourceEntry>> {
  clock.set(at);
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/sources' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { status: string; data: SourceEntry[] };
  assert.equal(body.status, 'success');
  return new Map(body.data.map((s) => [s.source, s]));
}

async function scrape(): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  return res.body;
}

function metric(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('before any run: the four registries are listed, krs configured and owing nothing yet', async () => {
  const list = await sources('2026-11-10T12:00:00Z');
  assert.deepEqual([...list.keys()], ['krs', 'bir', 'ceidg', 'vat']);
  assert.deepEqual(list.get('krs'), {
    source: 'krs',
    configured: true,
    health: 'ok',
    last_completed_date: null,
    last_run: null,
    gaps: [],
    companies: 0,
  });
  assert.deepEqual(list.get('bir'), {
    source: 'bir',
    configured: false,
    health: 'unconfigured',
    last_completed_date: null,
    last_run: null,
    gaps: [],
    companies: 0,
  });
});

test('a successful scheduled day', async () => {
  await tickAndWork('2026-11-11'); // runs 2026-11-10
  const krs = (await sources('2026-11-11T07:00:00Z')).get('krs')!;
  assert.equal(krs.health, 'ok');
  assert.equal(krs.last_completed_date, '2026-11-10');
  assert.deepEqual(krs.gaps, []);
  assert.equal(krs.companies, 1);
  assert.ok(krs.last_run);
  assert.deepEqual(
    { ...krs.last_run, started_at: typeof krs.last_run.started_at, finished_at: typeof krs.last_run.finished_at },
    {
      date: '2026-11-10',
      status: 'completed',
      started_at: 'string',
      finished_at: 'string',
      new: 1,
      updated: 0,
      deleted: 0,
      events: 0,
    },
  );
  assert.ok(Date.parse(krs.last_run.finished_at!) >= Date.parse(krs.last_run.started_at));
});

test('a day the registry is down: the run fails, the source is degraded and the day is a gap', async () => {
  down = true;
  await tickAndWork('2026-11-12'); // 2026-11-11 fails
  // Not due before 06:00 UTC, but a day whose run failed is missing at once.
  let krs = (await sources('2026-11-12T05:00:00Z')).get('krs')!;
  assert.deepEqual(krs.gaps, ['2026-11-11']);
  assert.equal(krs.health, 'degraded');
  krs = (await sources('2026-11-12T07:00:00Z')).get('krs')!;
  assert.equal(krs.health, 'degraded');
  assert.equal(krs.last_completed_date, '2026-11-10');
  assert.equal(krs.last_run?.date, '2026-11-11');
  assert.equal(krs.last_run?.status, 'failed');
  assert.deepEqual(krs.gaps, ['2026-11-11']);

  const body = await scrape();
  assert.equal(metric(body, 'regwatch_source_gaps{source="krs"}'), 1);
  assert.equal(metric(body, 'regwatch_source_last_completed_date_seconds{source="krs"}'), Date.UTC(2026, 10, 10) / 1000);
  assert.equal(metric(body, 'regwatch_source_health{source="krs",health="degraded"}'), 1);
  assert.equal(metric(body, 'regwatch_source_health{source="krs",health="ok"}'), 0);
  assert.equal(metric(body, 'regwatch_source_health{source="bir",health="unconfigured"}'), 1);
  assert.equal(metric(body, 'regwatch_source_gaps{source="bir"}'), undefined, 'no gap count for a source nobody runs');
});

test('a missed day (no worker): three due days without a completed run make the source down', async () => {
  down = false;
  // No tick on 2026-11-13 (for 2026-11-12), none yet on 2026-11-14 (for 2026-11-13): 2026-11-13 is
  // not due before 06:00 UTC.
  let krs = (await sources('2026-11-14T01:00:00Z')).get('krs')!;
  assert.equal(krs.health, 'degraded');
  assert.deepEqual(krs.gaps, ['2026-11-11', '2026-11-12']);
  krs = (await sources('2026-11-14T07:00:00Z')).get('krs')!;
  assert.equal(krs.health, 'down');
  assert.deepEqual(krs.gaps, ['2026-11-11', '2026-11-12', '2026-11-13']);
  assert.equal(metric(await scrape(), 'regwatch_source_health{source="krs",health="down"}'), 1);
});

test('the next tick catches up the failed and the missed day, oldest first, then runs its own', async () => {
  await tickAndWork('2026-11-14');
  const { rows } = await sql<{ run_date: string; status: string; attempts: number }>`
    SELECT run_date::text AS run_date, status, attempts FROM daily_runs WHERE source = 'krs' ORDER BY finished_at, id`.execute(db.db);
  assert.deepEqual(
    rows.map((r) => [r.run_date, r.status]),
    [
      ['2026-11-10', 'completed'],
      ['2026-11-11', 'completed'],
      ['2026-11-12', 'completed'],
      ['2026-11-13', 'completed'],
    ],
  );
  assert.ok(rows[1]!.attempts >= 2, 'the failed day was resumed, not run anew');
  const krs = (await sources('2026-11-14T07:00:00Z')).get('krs')!;
  assert.equal(krs.health, 'ok');
  assert.deepEqual(krs.gaps, []);
  assert.equal(krs.last_completed_date, '2026-11-13');
  assert.equal(krs.last_run?.date, '2026-11-13');
  assert.equal(krs.last_run?.status, 'completed');
  const body = await scrape();
  assert.equal(metric(body, 'regwatch_source_gaps{source="krs"}'), 0);
  assert.equal(metric(body, 'regwatch_source_last_completed_date_seconds{source="krs"}'), Date.UTC(2026, 10, 13) / 1000);

  // A tick again for the same day queues nothing: every day is done.
  await jobs.tasks[DAILY_TICK_TASK]!({ _cron: { ts: '2026-11-14T03:00:00.000Z' } }, {} as JobHelpers);
  const queued = await sql<{ n: number }>`SELECT count(*)::int AS n FROM graphile_worker._private_jobs`.execute(db.db);
  assert.equal(queued.rows[0]!.n, 0);
});

test('a day older than the source can serve stays a gap: BIR reaches 7 days back', async () => {
  const birDb = await createTestDatabase();
  const birClock = createManualClock('2026-11-20T03:00:00Z');
  const birApp = await createTestApp({
    db: birDb,
    clock: birClock,
    env: { REGISTRY_SOURCES: 'bir', BIR_API_URL: 'http://127.0.0.1:1/bir', BIR_API_KEY: 'k' },
  });
  const birJobs = createRegistryJobs({ config: birApp.config, db: birDb.db, logger, clock: birClock });
  // Watched since 2026-11-05 (a run completed then); the worker was off since.
  await sql`INSERT INTO daily_runs (run_date, source, source_key, status, finished_at) VALUES ('2026-11-05', 'bir', 'bir', 'completed', now())`.execute(
    birDb.db,
  );
  await birJobs.tasks[DAILY_TICK_TASK]!({ _cron: { ts: '2026-11-20T03:00:00.000Z' } }, {} as JobHelpers);
  const { rows } = await sql<{ date: string }>`SELECT payload->>'date' AS date FROM graphile_worker._private_jobs ORDER BY id`.execute(
    birDb.db,
  );
  assert.deepEqual(
    rows.map((r) => r.date),
    ['2026-11-13', '2026-11-14', '2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19'],
  );
  birClock.set('2026-11-20T07:00:00Z');
  const res = await birApp.app.inject({ method: 'GET', url: '/api/v1/sources' });
  const bir = (res.json() as { data: SourceEntry[] }).data.find((s) => s.source === 'bir')!;
  assert.deepEqual(bir.gaps.slice(0, 7), [
    '2026-11-06',
    '2026-11-07',
    '2026-11-08',
    '2026-11-09',
    '2026-11-10',
    '2026-11-11',
    '2026-11-12',
  ]);
  assert.equal(bir.health, 'down');
});

test('synthetic when configured, file when it ran; their runs counted under their names', async () => {
  const otherDb = await createTestDatabase();
  const otherClock = createManualClock('2026-11-21T10:00:00Z');
  const other = await createTestApp({ db: otherDb, clock: otherClock, env: { REGISTRY_SOURCES: 'synthetic', DEMO_COMPANIES: '50' } });
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-sources-'));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  await runDaily(otherDb.db, {
    date: '2026-11-20',
    source: createFileSource(writeNdjson(join(dir, 'day.ndjson'), [companySnapshot({ n: 1 }), companySnapshot({ n: 2 })])),
  });
  const res = await other.app.inject({ method: 'GET', url: '/api/v1/sources' });
  const list = (res.json() as { data: SourceEntry[] }).data;
  assert.deepEqual(
    list.map((s) => [s.source, s.configured, s.health]),
    [
      ['krs', false, 'unconfigured'],
      ['bir', false, 'unconfigured'],
      ['ceidg', false, 'unconfigured'],
      ['vat', false, 'unconfigured'],
      ['synthetic', true, 'ok'],
      ['file', false, 'unconfigured'],
    ],
  );
  const file = list.find((s) => s.source === 'file')!;
  assert.equal(file.companies, 2);
  assert.equal(file.last_completed_date, '2026-11-20');
  assert.deepEqual(file.gaps, [], 'a source nobody schedules owes nothing');
});

test('a configured source whose days no worker ever runs: watched from the day a process first served it, down after three due days', async () => {
  const lonelyDb = await createTestDatabase();
  const lonelyClock = createManualClock('2026-11-21T10:00:00Z');
  const api = await createTestApp({ db: lonelyDb, clock: lonelyClock, env: { REGISTRY_SOURCES: 'synthetic', DEMO_COMPANIES: '50' } });
  const synthetic = async (at: string) => {
    lonelyClock.set(at);
    const res = await api.app.inject({ method: 'GET', url: '/api/v1/sources' });
    return (res.json() as { data: SourceEntry[] }).data.find((s) => s.source === 'synthetic')!;
  };
  let s = await synthetic('2026-11-21T12:00:00Z');
  assert.deepEqual([s.health, s.gaps], ['ok', []], 'nothing owed on the first day');
  s = await synthetic('2026-11-23T07:00:00Z');
  assert.deepEqual([s.health, s.gaps], ['degraded', ['2026-11-21', '2026-11-22']]);
  s = await synthetic('2026-11-24T07:00:00Z');
  assert.deepEqual([s.health, s.gaps], ['down', ['2026-11-21', '2026-11-22', '2026-11-23']]);
  // A process started later with the same configuration keeps the earlier day.
  const later = await createTestApp({ db: lonelyDb, clock: lonelyClock, env: { REGISTRY_SOURCES: 'synthetic', DEMO_COMPANIES: '50' } });
  await later.app.ready();
  s = await synthetic('2026-11-24T07:00:00Z');
  assert.equal(s.health, 'down');
});

test('public, rate limited per client IP, and described in the OpenAPI document', async () => {
  const limited = await createTestApp({ db, clock, env: { ...env, RATE_LIMIT_PER_MINUTE: '3' } });
  for (let i = 0; i < 3; i++) {
    const ok = await limited.app.inject({ method: 'GET', url: '/api/v1/sources', remoteAddress: '10.0.0.7' });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers['x-ratelimit-limit'], '3');
    assert.equal(ok.headers['x-ratelimit-remaining'], String(2 - i));
  }
  const over = await limited.app.inject({ method: 'GET', url: '/api/v1/sources', remoteAddress: '10.0.0.7' });
  assert.equal(over.statusCode, 429);
  assert.ok(over.headers['retry-after']);
  const other = await limited.app.inject({ method: 'GET', url: '/api/v1/sources', remoteAddress: '10.0.0.8' });
  assert.equal(other.statusCode, 200, 'another client has its own allowance');

  const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<
      string,
      {
        get?: {
          security?: unknown;
          responses: Record<
            string,
            { content: Record<string, { schema: { properties: Record<string, unknown> }; example?: { status: string; data: unknown[] } }> }
          >;
        };
      }
    >;
  };
  const op = doc.paths['/api/v1/sources']?.get;
  assert.ok(op, 'the route is documented');
  assert.deepEqual(op.security, [], 'no credential (said explicitly)');
  const media = op.responses['200']!.content['application/json']!;
  assert.deepEqual(Object.keys(media.schema.properties), ['status', 'data']);
  assert.equal(media.example?.status, 'success', 'with an example');
  assert.equal(media.example?.data.length, 1);
});
