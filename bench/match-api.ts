/**
 * Batch matching through the real app (every hook: authentication, rate limits, pricing with its
 * ledger write) against a database holding a synthetic registry: the match index's build from
 * PostgreSQL, then `--batches` POST /companies/match of 100 queries each (names of sampled
 * companies, corrupted as in bench/match.ts), with the latency of each batch end to end
 * (inject(), no socket), including the read of the shown candidates.
 *
 *   psql postgres://postgres@127.0.0.1:5432/postgres -c "CREATE DATABASE regwatch_match_bench"
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_match_bench REGISTRY_SOURCES= node bin/regwatch.js seed --synthetic 100000 --seed 42 --date 2026-11-20
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_match_bench node --import tsx bench/match-api.ts [--batches 30]
 */
import { cpus, loadavg } from 'node:os';
import pino from 'pino';
import { sql } from 'kysely';
import { buildStandaloneApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { seededRandom } from '../src/lib/random.ts';
import { createCompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { createMatchEngine } from '../src/modules/match/engine.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { argValue, mb, summary } from './search-fixtures.ts';

const batches = Number(argValue('batches', '30'));
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/regwatch_match_bench';
console.log(
  JSON.stringify({ started: new Date().toISOString(), cpus: cpus().length, loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }),
);

const handle = createDatabase(url, { max: 10, applicationName: 'regwatch-bench' });
await migrateToLatest(handle.db, handle.pool);
const logger = pino({ level: 'warn' });
const engine = createMatchEngine({ db: handle.db, logger });
const t0 = performance.now();
await engine.refresh();
const status = engine.status();
console.log(
  JSON.stringify({
    companies: status.companies,
    index_build_ms: Math.round(performance.now() - t0),
    index_mb: mb(status.bytes ?? 0),
    rss_mb: mb(process.memoryUsage().rss),
  }),
);

const config = loadConfig({ ...process.env, DATABASE_URL: url, REGISTRY_SOURCES: '', RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'warn' });
// The search index is not built here (sql mode): only matching is measured.
const search = createCompanySearchEngine({ db: handle.db, logger, mode: 'sql' });
const app = await buildStandaloneApp(
  { config, db: handle.db, logger, clock: systemClock },
  { overrides: { matchEngine: engine, companySearch: search } },
);
await app.ready();
const email = `bench-${Date.now()}@example.com`;
await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, name: 'Benchmark' } });
const mail = await handle.db
  .selectFrom('mail_outbox')
  .select('text_body')
  .where('to_address', '=', email)
  .orderBy('id', 'desc')
  .executeTakeFirstOrThrow();
const init = await app.inject({
  method: 'POST',
  url: '/api/v1/auth/init',
  payload: { token: /^Initialization token: (\S+)$/m.exec(mail.text_body)![1] },
});
const headers = { authorization: `Bearer ${init.json().master_token as string}` };
const account = await handle.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
await applyLedgerEntry(handle.db, { accountId: account.id, type: 'deposit', amount: 10_000_000, description: 'benchmark credits' });

const rnd = seededRandom(11);
const { rows: samples } = await sql<{ name: string; city: string | null; postal_code: string | null }>`
  SELECT name, city_folded AS city, postal_code FROM companies TABLESAMPLE SYSTEM (5) LIMIT ${batches * 100}`.execute(handle.db);
const corrupt = (name: string) => {
  const words = name
    .replace(/SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ/, 'sp. z o.o.')
    .toLowerCase()
    .split(' ');
  if (rnd() < 0.3 && words.length > 1) [words[0], words[1]] = [words[1]!, words[0]!];
  return words.join(' ');
};
const workload = Array.from({ length: batches }, (_, b) =>
  samples.slice(b * 100, b * 100 + 100).map((s) => ({
    name: corrupt(s.name),
    ...(rnd() < 0.5 && s.city ? { city: s.city } : {}),
    ...(rnd() < 0.3 && s.postal_code ? { postal_code: s.postal_code } : {}),
  })),
);
const post = (queries: object[]) => app.inject({ method: 'POST', url: '/api/v1/companies/match', headers, payload: { queries } });
await post(workload[0]!);
const wall: number[] = [];
let matched = 0;
const tAll = performance.now();
for (const queries of workload) {
  const t1 = performance.now();
  const res = await post(queries);
  wall.push(performance.now() - t1);
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} ${res.body}`);
  for (const r of res.json().data as { candidates: { match: boolean }[] }[]) if (r.candidates.some((c) => c.match)) matched++;
}
const total = performance.now() - tAll;
console.log(
  JSON.stringify({
    batches: workload.length,
    queries: workload.length * 100,
    matched_share: Number((matched / (workload.length * 100)).toFixed(3)),
    batch_ms: summary(wall),
    queries_per_s: Math.round((workload.length * 100) / (total / 1000)),
  }),
);
console.log(JSON.stringify({ loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }));
await app.close();
await engine.stop();
await handle.close();
