/**
 * Small days, one after another in one process: where a 1 % day's time goes besides the changed
 * companies themselves. Loads `--companies` (default 200,000), then runs `--days` days (default
 * 3) of `--changed` changed companies each (default 10,000, different companies each day), and
 * prints per day the rate, Node.js's CPU a changed company, and the time at which each batch
 * committed (the first one shows the pipeline filling: its lookup and plan wait for its read,
 * its write for its plan). The first day runs the merge and diff code for the first time in the
 * process (a `regwatch daily` process always does); the later days show it compiled.
 *
 *   node --import tsx bench/registry-days.ts --companies 200000 --changed 10000 --days 3
 *   ... --batches 500,500,500      # a batch size per day (default: 2000 every day)
 *   ... --profile /tmp/day.cpuprofile  # a CPU profile of the first day (Chrome DevTools format)
 *   ... --profile-day 1                # ... of that day instead (0 is the first), compiled code
 *   ... --prepare-in-worker true|false # force where the days' lines are prepared (runDaily's prepareInWorker)
 */
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { sql } from 'kysely';
import { argValue, openBenchDatabase } from './registry-db.ts';
import { changedSnapshot, speedReference, syncToDisk, writeBenchFile } from './registry-fixtures.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { runDaily } from '../src/registry/daily.ts';

const companies = Number(argValue('companies', '200000'));
const changed = Number(argValue('changed', '10000'));
const days = Number(argValue('days', '3'));
const batches = argValue('batches', '').split(',').filter(Boolean).map(Number);
const profilePath = argValue('profile', '');
const profileDay = Number(argValue('profile-day', '0'));
const workerArg = argValue('prepare-in-worker', '');
const prepareInWorker = workerArg === '' ? undefined : workerArg === 'true';
const dir = mkdtempSync(join(tmpdir(), 'regwatch-days-'));
const bench = await openBenchDatabase();
const db = bench.handle.db;
try {
  console.log(JSON.stringify({ speed_reference_us: speedReference() }));
  const base = join(dir, 'base.ndjson');
  await writeBenchFile(base, 0, companies);
  await runDaily(db, { date: '2026-11-01', source: createFileSource(base), sourceKey: 'bench:load', batchSize: 2000 });
  rmSync(base);
  await sql`VACUUM ANALYZE companies, company_identifiers`.execute(db);
  await sql`CHECKPOINT`.execute(db);
  const step = Math.max(1, Math.floor(companies / changed));
  for (let day = 0; day < days; day++) {
    const file = join(dir, `day${day}.ndjson`);
    const out = createWriteStream(file);
    // Day d changes companies d, d + step, ...: no company twice.
    for (let i = 0, n = day; i < changed; i++, n += step) {
      if (!out.write(JSON.stringify(changedSnapshot(n % companies, 3 + day)) + '\n')) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    await syncToDisk(file);
    const session = day === profileDay && profilePath !== '' ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const batchSize = batches[day] ?? 2000;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const committed: number[] = [];
    const s = await runDaily(db, {
      date: `2026-11-${String(2 + day).padStart(2, '0')}`,
      source: createFileSource(file),
      sourceKey: 'bench:day',
      batchSize,
      prepareInWorker,
      onProgress: () => committed.push(Math.round(performance.now() - t0)),
    });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(profilePath, JSON.stringify(profile));
      session.disconnect();
    }
    rmSync(file);
    console.log(
      JSON.stringify({
        day,
        batch: batchSize,
        changed: s.updated,
        ms: Math.round(ms),
        per_second: Math.round((s.updated * 1000) / ms),
        node_cpu_us: Math.round((cpu.user + cpu.system) / s.updated),
        batches_committed_at_ms: committed,
      }),
    );
  }
} finally {
  await bench.dispose();
  rmSync(dir, { recursive: true, force: true });
}
