/**
 * What the feed's fan-out trigger costs a daily run: the same kind of day (changed companies,
 * spread over the table) with the trigger disabled and enabled, alternately, while accounts
 * watch part of the registry.
 *
 *   node --import tsx bench/watchlist-fanout.ts [--companies 100000] [--changed 20000] [--watched 10000] [--accounts 20]
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL (bench/registry-db.ts).
 * `--accounts` accounts each watch `--watched` companies (evenly spread, each account shifted).
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { runDaily } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { watchCompanies } from '../src/modules/watchlist/repo.ts';
import { argValue, openBenchDatabase } from './registry-db.ts';
import { changedSnapshot, writeBenchFile } from './registry-fixtures.ts';

const companies = Number(argValue('companies', '100000'));
const changed = Number(argValue('changed', '20000'));
const watched = Number(argValue('watched', '10000'));
const accounts = Number(argValue('accounts', '20'));
const dir = mkdtempSync(join(tmpdir(), 'regwatch-fanout-'));
const bench = await openBenchDatabase(`regwatch_bench_fanout_${process.pid}`);
const db = bench.handle.db;

async function day(date: string, dayNumber: number, fanOut: boolean) {
  const file = join(dir, `${date}.ndjson`);
  const out = createWriteStream(file);
  const step = Math.max(1, Math.floor(companies / changed));
  for (let i = 0, n = dayNumber; i < changed; i++, n += step) {
    if (!out.write(JSON.stringify(changedSnapshot(n % companies, dayNumber)) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await sql`ALTER TABLE events ${sql.raw(fanOut ? 'ENABLE' : 'DISABLE')} TRIGGER events_watchlist_fan_out`.execute(db);
  const feed0 = await feedRows();
  const pg0 = bench.postgresCpuSeconds();
  const t0 = performance.now();
  const s = await runDaily(db, { date, source: createFileSource(file), sourceKey: `fanout:${date}` });
  const seconds = (performance.now() - t0) / 1000;
  const pg1 = bench.postgresCpuSeconds();
  rmSync(file);
  return {
    date,
    fan_out: fanOut,
    companies: s.updated,
    events: s.events,
    feed_rows: (await feedRows()) - feed0,
    seconds: Number(seconds.toFixed(1)),
    pg_cpu_us_per_company: pg0 === null || pg1 === null ? null : Math.round(((pg1 - pg0) * 1e6) / s.updated),
  };
}

async function feedRows(): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM watchlist_feed`.execute(db);
  return rows[0]!.n;
}

try {
  const base = join(dir, 'base.ndjson');
  await writeBenchFile(base, 0, companies);
  await runDaily(db, { date: '2026-11-01', source: createFileSource(base), sourceKey: 'fanout:load' });
  rmSync(base);
  const { rows: ids } = await sql<{ id: string }>`SELECT id FROM companies ORDER BY id`.execute(db);
  const step = Math.max(1, Math.floor(ids.length / watched));
  for (let a = 0; a < accounts; a++) {
    const {
      rows: [acct],
    } = await sql<{ id: string }>`
      INSERT INTO accounts (user_ref, email, name, status) VALUES (${`FANOUT${String(a).padStart(6, '0')}`}, ${`fanout${a}@bench.test`}, 'bench', 'initialized') RETURNING id`.execute(
      db,
    );
    const mine = Array.from({ length: watched }, (_, i) => ids[(i * step + a) % ids.length]!.id);
    await db.transaction().execute((trx) => watchCompanies(trx, acct!.id, mine, new Date('2026-11-01T12:00:00Z')));
  }
  await sql`VACUUM ANALYZE`.execute(db);
  console.log(`${companies} companies; ${accounts} accounts watching ${watched} each; ${changed} companies change a day`);
  const results: Awaited<ReturnType<typeof day>>[] = [];
  for (const [i, fanOut] of [false, true, false, true].entries()) {
    const r = await day(`2026-11-0${i + 2}`, i + 2, fanOut);
    console.log(JSON.stringify(r));
    results.push(r);
  }
  const mean = (on: boolean, key: 'seconds' | 'pg_cpu_us_per_company') => {
    const xs = results.filter((r) => r.fan_out === on).map((r) => r[key] ?? 0);
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  console.log(
    `fan-out off: ${mean(false, 'seconds').toFixed(1)} s, ${mean(false, 'pg_cpu_us_per_company').toFixed(0)} µs PostgreSQL CPU per changed company`,
  );
  console.log(
    `fan-out on:  ${mean(true, 'seconds').toFixed(1)} s, ${mean(true, 'pg_cpu_us_per_company').toFixed(0)} µs PostgreSQL CPU per changed company`,
  );
} finally {
  await sql`ALTER TABLE events ENABLE TRIGGER events_watchlist_fan_out`.execute(db).catch(() => {});
  await bench.dispose();
  rmSync(dir, { recursive: true, force: true });
}
