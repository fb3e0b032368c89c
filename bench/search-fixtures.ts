/**
 * Shared parts of the search and snapshot benchmarks: the database and the app under test, an
 * account with credits, the workload of distinct filter combinations, percentiles, memory
 * sampling, and an autocannon load run in a child process (so the load generator does not share
 * the server's event loop).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { buildStandaloneApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDatabase, type DatabaseHandle } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { systemClock } from '../src/lib/clock.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { createCompanySearchEngine, type CompanySearchEngine } from '../src/modules/companies/search-engine.ts';
import { seededRandom } from '../src/lib/random.ts';

export const DEFAULT_BENCH_URL = 'postgres://postgres@127.0.0.1:5432/regwatch_bench';

export function argValue(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function summary(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const r = (x: number) => Number(x.toFixed(2));
  return {
    n: s.length,
    p50: r(percentile(s, 50)),
    p95: r(percentile(s, 95)),
    p99: r(percentile(s, 99)),
    max: r(s.at(-1) ?? NaN),
    mean: r(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)),
  };
}

export const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** RSS and heap of this process every 100 ms while `run` runs. */
export async function sampleMemory<T>(run: () => Promise<T>): Promise<{ result: T; maxRssMb: number; maxHeapMb: number }> {
  let maxRss = 0;
  let maxHeap = 0;
  const take = () => {
    const m = process.memoryUsage();
    maxRss = Math.max(maxRss, m.rss);
    maxHeap = Math.max(maxHeap, m.heapUsed);
  };
  take();
  const timer = setInterval(take, 100);
  try {
    const result = await run();
    take();
    return { result, maxRssMb: mb(maxRss), maxHeapMb: mb(maxHeap) };
  } finally {
    clearInterval(timer);
  }
}

export interface BenchApp {
  app: FastifyInstance;
  baseUrl: string;
  handle: DatabaseHandle;
  engine: CompanySearchEngine;
  token: string;
  buildMs: number;
  close(): Promise<void>;
}

/**
 * The real app on the benchmark database (DATABASE_URL, default the local `regwatch_bench`),
 * listening on a real socket, with its search index built before anything is measured.
 */
export async function startBenchApp(options: { engine?: 'memory' | 'sql' } = {}): Promise<BenchApp> {
  const url = process.env.DATABASE_URL || DEFAULT_BENCH_URL;
  const handle = createDatabase(url, { max: 20, applicationName: 'regwatch-bench' });
  await migrateToLatest(handle.db, handle.pool);
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url,
    REGISTRY_SOURCES: '',
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  });
  const logger = pino({ level: 'warn' });
  const engine = createCompanySearchEngine({ db: handle.db, logger, mode: options.engine ?? 'memory' });
  const t0 = performance.now();
  await engine.refresh();
  const buildMs = performance.now() - t0;
  const app = await buildStandaloneApp({ config, db: handle.db, logger, clock: systemClock }, { overrides: { companySearch: engine } });
  app.get('/bench/bare', { config: { auth: 'none', rateLimitGroup: 'none' } }, async () => ({ status: 'success', data: { ok: true } }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const token = await createBenchAccount(app, handle);
  return {
    app,
    baseUrl,
    handle,
    engine,
    token,
    buildMs,
    close: async () => {
      // Let requests a load run left in flight finish before the pool goes.
      await new Promise((r) => setTimeout(r, 1500));
      await app.close();
      await engine.stop();
      await handle.close();
    },
  };
}

async function createBenchAccount(app: FastifyInstance, handle: DatabaseHandle): Promise<string> {
  const email = `bench-${Date.now()}-${process.pid}@example.com`;
  const reg = await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, name: 'Benchmark' } });
  if (reg.statusCode !== 201) throw new Error(`register: ${reg.body}`);
  const mail = await handle.db
    .selectFrom('mail_outbox')
    .select('text_body')
    .where('to_address', '=', email)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const initToken = /^Initialization token: (\S+)$/m.exec(mail.text_body)![1];
  const init = await app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token: initToken } });
  const master = init.json().master_token as string;
  const account = await handle.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  await applyLedgerEntry(handle.db, { accountId: account.id, type: 'deposit', amount: 100_000_000, description: 'benchmark credits' });
  return master;
}

// ------------------------------------------------------------------------------------------------
// The search workload

export interface WorkloadQuery {
  kind: string;
  query: Record<string, string>;
}

/**
 * At least `size` distinct filter combinations drawn from the values in the database: each filter
 * alone, common pairs and triples, wide ones (status alone, a whole voivodeship, a one-digit
 * activity prefix) and narrow ones (a postal code, a rare city), some of them on later pages.
 */
export async function buildWorkload(handle: DatabaseHandle, size = 1200, seed = 1): Promise<WorkloadQuery[]> {
  const db = handle.db;
  const random = seededRandom(seed);
  const col = async (q: ReturnType<typeof sql<{ v: string }>>) =>
    (await q.execute(db)).rows.map((r) => r.v).filter((v) => v !== null && v !== '');
  const bigCities = await col(
    sql<{ v: string }>`SELECT city_folded AS v FROM companies WHERE city_folded IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC LIMIT 20`,
  );
  const cities = await col(
    sql<{ v: string }>`SELECT DISTINCT city_folded AS v FROM companies TABLESAMPLE SYSTEM (1) REPEATABLE (7) WHERE city_folded IS NOT NULL`,
  );
  const postal = await col(
    sql<{
      v: string;
    }>`SELECT DISTINCT postal_code AS v FROM companies TABLESAMPLE SYSTEM (1) REPEATABLE (7) WHERE postal_code IS NOT NULL LIMIT 2000`,
  );
  const codes = await col(
    sql<{
      v: string;
    }>`SELECT c AS v FROM (SELECT unnest(activity_codes) AS c FROM companies TABLESAMPLE SYSTEM (2) REPEATABLE (7)) s GROUP BY 1 ORDER BY count(*) DESC`,
  );
  const words = await col(sql<{ v: string }>`
    SELECT w AS v FROM (SELECT regexp_split_to_table(name_folded, '[^a-z0-9]+') AS w FROM companies TABLESAMPLE SYSTEM (1) REPEATABLE (7)) s
    WHERE length(w) >= 3 GROUP BY 1 ORDER BY count(*) DESC LIMIT 400`);
  const voivodeships = await col(
    sql<{ v: string }>`SELECT DISTINCT voivodeship_folded AS v FROM companies WHERE voivodeship_folded IS NOT NULL`,
  );
  const legal = await col(sql<{ v: string }>`SELECT DISTINCT legal_form AS v FROM companies WHERE legal_form IS NOT NULL`);
  const range = (
    await sql<{
      lo: string;
      hi: string;
    }>`SELECT to_char(min(activity_start), 'YYYY-MM-DD') AS lo, to_char(max(activity_start), 'YYYY-MM-DD') AS hi FROM companies`.execute(db)
  ).rows[0]!;
  const lo = Date.parse(range.lo);
  const hi = Date.parse(range.hi);

  const one = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const date = () => new Date(lo + random() * (hi - lo)).toISOString().slice(0, 10);
  const dotted = (c: string) => (random() < 0.5 && c.length === 5 ? `${c.slice(0, 2)}.${c.slice(2, 4)}.${c[4]}` : c);
  const topCode = () => one(codes.slice(0, 40));
  const anyCode = () => one(codes);
  const prefix = (len: number) => anyCode().slice(0, len);
  const status = () => one(['ACTIVE', 'ACTIVE', 'ACTIVE', 'SUSPENDED', 'DELETED']);
  const contact = () => one(['phone', 'email', 'fax']);
  const dash = (p: string) => (random() < 0.5 ? `${p.slice(0, 2)}-${p.slice(2)}` : p);
  const from = () => date();
  const span = () => {
    const a = date();
    const b = date();
    return a < b ? { activity_start_from: a, activity_start_to: b } : { activity_start_from: b, activity_start_to: a };
  };

  const generators: [string, () => Record<string, string>][] = [
    // each filter alone
    ['status', () => ({ status: status() })],
    ['has_contact', () => ({ has_contact: contact() })],
    ['activity_code', () => ({ activity_code: dotted(anyCode()) })],
    ['activities', () => ({ activities: `${topCode()},${anyCode()},${anyCode()}` })],
    ['activity_prefix', () => ({ activity_prefix: prefix(1 + Math.floor(random() * 4)) })],
    ['activity_start_from', () => ({ activity_start_from: from() })],
    ['activity_start_to', () => ({ activity_start_to: date() })],
    ['open_from', () => ({ open_from: from() })],
    ['voivodeship', () => ({ voivodeship: one(voivodeships) })],
    ['city (large)', () => ({ city: one(bigCities) })],
    ['city', () => ({ city: one(cities) })],
    ['postal_code', () => ({ postal_code: dash(one(postal)) })],
    ['legal_form', () => ({ legal_form: one(legal) })],
    ['q', () => ({ q: one(words).slice(0, 3 + Math.floor(random() * 4)) })],
    // pairs
    ['city + activity_code', () => ({ city: one(bigCities), activity_code: topCode() })],
    ['voivodeship + legal_form', () => ({ voivodeship: one(voivodeships), legal_form: one(legal) })],
    ['status + has_contact', () => ({ status: status(), has_contact: contact() })],
    ['activity_prefix + voivodeship', () => ({ activity_prefix: prefix(2), voivodeship: one(voivodeships) })],
    ['date range', () => span()],
    ['city + has_contact', () => ({ city: one(cities), has_contact: contact() })],
    ['q + city', () => ({ q: one(words).slice(0, 4), city: one(bigCities) })],
    ['postal_code + activity_prefix', () => ({ postal_code: one(postal), activity_prefix: prefix(1) })],
    ['legal_form + open_from', () => ({ legal_form: one(legal), open_from: from() })],
    // triples and more
    ['voivodeship + legal_form + has_contact', () => ({ voivodeship: one(voivodeships), legal_form: one(legal), has_contact: contact() })],
    ['city + activity_prefix + from', () => ({ city: one(bigCities), activity_prefix: prefix(2), activity_start_from: from() })],
    ['status + voivodeship + date range', () => ({ status: status(), voivodeship: one(voivodeships), ...span() })],
    [
      'activities + has_contact + legal_form',
      () => ({ activities: `${topCode()},${topCode()}`, has_contact: contact(), legal_form: one(legal) }),
    ],
    ['q + voivodeship + has_contact', () => ({ q: one(words).slice(0, 5), voivodeship: one(voivodeships), has_contact: contact() })],
    [
      'five filters',
      () => ({ voivodeship: one(voivodeships), legal_form: 'jdg', has_contact: 'phone', activity_prefix: prefix(1), ...span() }),
    ],
    // wide, and later pages of wide ones
    ['wide: no filter', () => ({})],
    ['wide: page', () => ({ page: String(2 + Math.floor(random() * 499)) })],
    ['wide: has_contact page', () => ({ has_contact: contact(), page: String(2 + Math.floor(random() * 200)) })],
    ['wide: prefix 1 digit', () => ({ activity_prefix: prefix(1), page: String(1 + Math.floor(random() * 20)) })],
  ];

  const seen = new Set<string>();
  const out: WorkloadQuery[] = [];
  const add = (kind: string, query: Record<string, string>) => {
    const key = JSON.stringify(Object.entries(query).sort());
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ kind, query });
  };
  // The fixed wide cases first, then rounds over every generator until the size is reached.
  add('wide: no filter', {});
  for (const s of ['ACTIVE', 'SUSPENDED', 'DELETED']) add('status', { status: s });
  for (let guard = 0; out.length < size && guard < size * 20; guard++) {
    const [kind, gen] = generators[guard % generators.length]!;
    add(kind, gen());
  }
  return out;
}

export function queryString(query: Record<string, string>): string {
  return new URLSearchParams(query).toString();
}

// ------------------------------------------------------------------------------------------------
// Load with autocannon, in a child process

export interface LoadSpec {
  url: string;
  connections: number;
  durationSeconds: number;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Paths (GET) or bodies (POST) to pick from at random, one per request. */
  paths?: string[];
  bodies?: string[];
  path?: string;
  /** Bearer tokens to pick from at random, one per request (several accounts), instead of the headers' one. */
  tokens?: string[];
}

export interface LoadResult {
  requestsPerSecond: number;
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  total: number;
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--autocannon'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      resolve(JSON.parse(out) as LoadResult);
    });
    child.stdin.end(JSON.stringify(spec));
  });
}

async function autocannonMain(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const spec = JSON.parse(Buffer.concat(chunks).toString()) as LoadSpec;
  // @ts-expect-error autocannon ships no type declarations
  const { default: autocannon } = await import('autocannon');
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
  const result = (await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationSeconds,
    requests: [
      {
        method: spec.method,
        path: spec.path ?? '/',
        headers: spec.headers,
        setupRequest: (req: Record<string, unknown>) => {
          if (spec.paths) req.path = pick(spec.paths);
          if (spec.bodies) req.body = pick(spec.bodies);
          if (spec.tokens) req.headers = { ...(req.headers as Record<string, string>), authorization: `Bearer ${pick(spec.tokens)}` };
          return req;
        },
      },
    ],
  } as never)) as unknown as {
    requests: { average: number };
    latency: { p50: number; p90: number; p99: number; max: number; average: number };
    non2xx: number;
    errors: number;
    '2xx': number;
  };
  const out: LoadResult = {
    requestsPerSecond: Math.round(result.requests.average),
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.average,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    total: result['2xx'] + result.non2xx,
  };
  process.stdout.write(JSON.stringify(out));
}

if (process.argv.includes('--autocannon') && process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await autocannonMain();
}
