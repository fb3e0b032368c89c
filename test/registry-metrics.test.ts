import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaily } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { defer } from './helpers/cleanup.ts';
import { createTestApp } from './helpers/app.ts';
import { companySnapshot, writeNdjson } from './helpers/registry.ts';

/** The daily runs on GET /metrics: what an operator alerts on when a day's run is late or failed. */

const t = await createTestApp();
const dir = mkdtempSync(join(tmpdir(), 'regwatch-metrics-'));
defer(() => rmSync(dir, { recursive: true, force: true }));

async function scrape(): Promise<string> {
  const m = await t.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(m.statusCode, 200);
  return m.body;
}

function value(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('no run yet: no series for any source', async () => {
  const body = await scrape();
  assert.match(body, /# TYPE regwatch_registry_last_completed_run_date_seconds gauge/);
  assert.doesNotMatch(body, /regwatch_registry_last_completed_run_date_seconds\{/);
  assert.doesNotMatch(body, /regwatch_registry_unfinished_runs\{/);
});

test('the latest completed run of each source, its counts, and the runs that failed', async () => {
  const day1 = writeNdjson(join(dir, 'day1.ndjson'), [companySnapshot({ n: 1 }), companySnapshot({ n: 2 }), companySnapshot({ n: 3 })]);
  const day2 = writeNdjson(join(dir, 'day2.ndjson'), [companySnapshot({ n: 1, name: 'NOWA NAZWA' }), companySnapshot({ n: 4 })]);
  await runDaily(t.db.db, { date: '2026-11-19', source: createFileSource(day1) });
  await runDaily(t.db.db, { date: '2026-11-20', source: createFileSource(day2) });
  // A later day whose file is missing: the run fails and waits for a retry.
  await assert.rejects(runDaily(t.db.db, { date: '2026-11-21', source: createFileSource(join(dir, 'missing.ndjson')) }));

  const body = await scrape();
  assert.equal(value(body, 'regwatch_registry_last_completed_run_date_seconds{source="file"}'), Date.UTC(2026, 10, 20) / 1000);
  assert.equal(value(body, 'regwatch_registry_last_completed_run_count{source="file",kind="new"}'), 1);
  assert.equal(value(body, 'regwatch_registry_last_completed_run_count{source="file",kind="updated"}'), 1);
  assert.equal(value(body, 'regwatch_registry_last_completed_run_count{source="file",kind="events"}'), 1);
  assert.equal(value(body, 'regwatch_registry_last_completed_run_count{source="file",kind="deleted"}'), 0);
  const duration = value(body, 'regwatch_registry_last_completed_run_duration_seconds{source="file"}');
  assert.ok(duration !== undefined && duration >= 0 && duration < 60, `duration ${duration}`);
  assert.equal(value(body, 'regwatch_registry_unfinished_runs{source="file",status="failed"}'), 1);
});
