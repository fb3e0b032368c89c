/**
 * API throughput and its CPU a request, with the API in a process of its own and autocannon in
 * another: snapshot and search at 50 connections over many accounts, beside (a) a bare Fastify
 * route, (b) a bare route inside the app (every global hook) and (c) a minimal route making the
 * snapshot's database round trips with plain `pg` (token lookup, one company read, one charge with
 * its ledger row). For each: requests a second, p50/p99, and the CPU a request of the API process
 * and of its PostgreSQL backends (from /proc/<pid>/stat, found by application_name), so the
 * figures hold on a machine other work is loading: "requests per core" is 1000 ÷ (API ms + PG ms).
 * When the server has pg_stat_statements loaded, its statements' planning and execution times too.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench node --import tsx bench/api-throughput.ts \
 *     [--seconds 10] [--warmup 3] [--connections 50] [--accounts 200] [--only snapshot,search,pg-min,bare-app,bare] [--app-dir DIR] [--cpu-prof]
 *     [--answer-cache N]
 *
 * `--cpu-prof` writes the server's V8 CPU profile of each measured run to /tmp/regwatch-bench-prof/<target>.cpuprofile.
 * `--app-dir` serves the app of another checkout (e.g. a worktree of the base commit) against the
 * same database, so before and after can be measured interleaved in the same conditions. The
 * database must hold the registry already (`regwatch seed --synthetic 1000000`, docs/benchmarks.md).
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { createDatabase } from '../src/db/database.ts';
import type * as appModule from '../src/app.ts';
import type * as configModule from '../src/config.ts';
import type * as databaseModule from '../src/db/database.ts';
import type * as clockModule from '../src/lib/clock.ts';
import type * as ledgerModule from '../src/modules/wallet/ledger.ts';
import type * as searchEngineModule from '../src/modules/companies/search-engine.ts';
import type * as matchEngineModule from '../src/modules/match/engine.ts';
import type * as identifiersModule from '../src/lib/identifiers.ts';
import type * as idsModule from '../src/lib/ids.ts';
import { argValue, buildWorkload, DEFAULT_BENCH_URL, queryString, runLoad, type LoadResult, type LoadSpec } from './search-fixtures.ts';

// Per run (the measuring process's pid, handed to the server): two runs on one database at once
// (other engineers' benchmarks) must not count each other's PostgreSQL backends.
const APP_NAME = `regwatch-bench-api-${argValue('run-id', String(process.pid))}`;
const url = process.env.DATABASE_URL || DEFAULT_BENCH_URL;
const here = dirname(fileURLToPath(import.meta.url));

// ------------------------------------------------------------------------------------------------
// The server process: the app of --app-dir, a plain Fastify, and the minimal pg route.

interface Ready {
  appUrl: string;
  bareUrl: string;
  tokens: string[];
  commit: string;
}

async function serve(): Promise<void> {
  const dir = resolve(argValue('app-dir', resolve(here, '..')));
  const accounts = Number(argValue('accounts', '200'));
  const load = async <T>(path: string) => (await import(resolve(dir, path))) as T;
  const { buildStandaloneApp } = await load<typeof appModule>('src/app.ts');
  const { loadConfig } = await load<typeof configModule>('src/config.ts');
  const { createDatabase } = await load<typeof databaseModule>('src/db/database.ts');
  const { systemClock } = await load<typeof clockModule>('src/lib/clock.ts');
  const { applyLedgerEntry } = await load<typeof ledgerModule>('src/modules/wallet/ledger.ts');
  const { createCompanySearchEngine } = await load<typeof searchEngineModule>('src/modules/companies/search-engine.ts');
  const { createMatchEngine } = await load<typeof matchEngineModule>('src/modules/match/engine.ts');
  const { parseIdentifier, identifierKey } = await load<typeof identifiersModule>('src/lib/identifiers.ts');
  const { hashSecret } = await load<typeof idsModule>('src/lib/ids.ts');

  const handle = createDatabase(url, { max: 20, applicationName: APP_NAME });
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: url,
    REGISTRY_SOURCES: '',
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  });
  const logger = pino({ level: 'warn' });
  const engine = createCompanySearchEngine({
    db: handle.db,
    logger,
    mode: argValue('only', 'search').includes('search') ? 'memory' : 'sql',
    // `--answer-cache 0` measures every search uncached (the engine keeps 10,000 answers per index by default).
    ...(argValue('answer-cache', '') === '' ? {} : { answerCache: Number(argValue('answer-cache', '')) }),
  });
  await engine.refresh();
  // Batch matching's index (its own module) is built here, before anything is measured: built by
  // the app on start, it would take the server's CPU during the first measured targets.
  const matchEngine = createMatchEngine({ db: handle.db, logger });
  await matchEngine.refresh();
  const app = await buildStandaloneApp(
    { config, db: handle.db, logger, clock: systemClock },
    { overrides: { companySearch: engine, matchEngine } },
  );
  app.get('/bench/bare', { config: { auth: 'none', rateLimitGroup: 'none' } }, async () => ({ status: 'success', data: { ok: true } }));

  // (c): the snapshot's round trips, nothing else, with plain pg (unnamed statements, as Kysely sends them).
  const pool = new pg.Pool({ connectionString: url, max: 20, application_name: APP_NAME });
  app.post('/bench/pg-min', { config: { auth: 'none', rateLimitGroup: 'none' } }, async (req, reply) => {
    const token = (req.headers.authorization ?? '').slice(7);
    const body = req.body as { identifier_type: 'NIP' | 'KRS' | 'REGON9'; identifier_value: string };
    const t = await pool.query<{ id: string; account_id: string; revoked_at: Date | null }>(
      'SELECT t.id, t.account_id, t.revoked_at, t.expires_at, a.email FROM api_tokens t JOIN accounts a ON a.id = t.account_id WHERE t.secret_hash = $1',
      [hashSecret(token)],
    );
    if (!t.rows[0] || t.rows[0].revoked_at) return reply.code(401).send({ error: 'Invalid API token' });
    const parsed = parseIdentifier(body.identifier_type, body.identifier_value);
    if (!parsed.ok) return reply.code(422).send({ error: parsed.error });
    const c = await pool.query(
      'SELECT c.id, c.snapshot::json AS snapshot FROM company_identifiers ci JOIN companies c ON c.id = ci.company_id WHERE ci.key = $1::bigint',
      [identifierKey(body.identifier_type, parsed.value)],
    );
    if (!c.rows[0]) return reply.code(404).send({ message: 'Company not found' });
    const charged = await pool.query(
      `
      WITH upd AS (UPDATE wallets SET balance = balance - 1, updated_at = now() WHERE account_id = $1 AND balance >= 1 RETURNING account_id, balance)
      INSERT INTO wallet_transactions (account_id, type, amount, balance_after, description) SELECT account_id, 'usage', -1, balance, 'companies.snapshot' FROM upd`,
      [t.rows[0].account_id],
    );
    if (charged.rowCount !== 1) return reply.code(402).send({ message: 'Insufficient credits' });
    return { status: 'success', data: (c.rows[0] as { snapshot: unknown }).snapshot };
  });
  app.addHook('onClose', async () => {
    await pool.end();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });

  const bare = Fastify({ logger: false });
  bare.get('/bare', async () => ({ status: 'success', data: { ok: true } }));
  await bare.listen({ port: 0, host: '127.0.0.1' });

  const tokens: string[] = [];
  for (let i = 0; i < accounts; i++) {
    const email = `bench-${Date.now()}-${process.pid}-${i}@example.com`;
    const reg = await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, name: 'Benchmark' } });
    if (reg.statusCode !== 201) throw new Error(`register: ${reg.body}`);
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
    tokens.push(init.json().master_token as string);
    const account = await handle.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    await applyLedgerEntry(handle.db, { accountId: account.id, type: 'deposit', amount: 100_000_000, description: 'benchmark credits' });
  }
  let commit = '';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: dir }).toString().trim();
  } catch {
    /* not a checkout */
  }
  const port = (s: { server: { address(): unknown } }) => (s.server.address() as { port: number }).port;
  const ready: Ready = { appUrl: `http://127.0.0.1:${port(app)}`, bareUrl: `http://127.0.0.1:${port(bare)}`, tokens, commit };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  // Commands from the parent until it closes stdin: `prof-start`, `prof-stop <target>`.
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((ok, fail) => session.post(method, params ?? {}, (e, r) => (e ? fail(e) : ok(r))));
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, target] = line.split(' ');
    if (cmd === 'prof-start') {
      await post('Profiler.enable');
      await post('Profiler.start');
    }
    if (cmd === 'prof-stop') {
      const { profile } = (await post('Profiler.stop')) as { profile: unknown };
      mkdirSync('/tmp/regwatch-bench-prof', { recursive: true });
      writeFileSync(`/tmp/regwatch-bench-prof/${target}.cpuprofile`, JSON.stringify(profile));
    }
    process.stdout.write(`${cmd} done\n`);
  }
  await bare.close();
  await app.close();
  await engine.stop();
  await matchEngine.stop();
  await handle.close();
}

// ------------------------------------------------------------------------------------------------
// The measuring process

const TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** utime + stime of a process in ms; 0 when it is gone. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
  } catch {
    return 0;
  }
}

/** The whole machine's busy share (0..1) between two readings of /proc/stat. */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!;
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

async function main(): Promise<void> {
  const seconds = Number(argValue('seconds', '10'));
  const warmup = Number(argValue('warmup', '3'));
  const connections = Number(argValue('connections', '50'));
  const only = argValue('only', 'bare,bare-app,pg-min,snapshot,search').split(',');
  const admin = new pg.Pool({ connectionString: url, max: 2, application_name: 'regwatch-bench-measure' });
  const started = performance.now();

  const server: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', '--run-id', String(process.pid), ...process.argv.slice(2)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: server.stdout! })[Symbol.asyncIterator]();
  server.on('exit', (code) => {
    if (code !== 0) {
      console.error(`server exited ${code}`);
      process.exit(1);
    }
  });
  const ready = JSON.parse((await lines.next()).value as string) as Ready;
  const profile = process.argv.includes('--cpu-prof');
  const command = async (line: string) => {
    server.stdin!.write(`${line}\n`);
    await lines.next();
  };
  const serverPid = server.pid!;
  console.log(
    JSON.stringify({
      started: new Date().toISOString(),
      cpus: cpus().length,
      loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))),
      app_commit: ready.commit,
      accounts: ready.tokens.length,
      connections,
      seconds,
      server_ready_s: Math.round((performance.now() - started) / 1000),
    }),
  );

  let statements = true;
  try {
    await admin.query('SELECT pg_stat_statements_reset()');
  } catch {
    statements = false;
  }

  const { rows: ids } = await admin.query<{ type: string; value: string }>(
    'SELECT identifier_type(key) AS type, identifier_value(key) AS value FROM company_identifiers TABLESAMPLE SYSTEM (1) REPEATABLE (3) LIMIT 5000',
  );
  const bodies = ids.map((r) => JSON.stringify({ identifier_type: r.type, identifier_value: r.value }));
  const json = { 'content-type': 'application/json' };
  const targets: Record<string, Omit<LoadSpec, 'durationSeconds' | 'connections'>> = {
    bare: { url: ready.bareUrl, method: 'GET', path: '/bare', headers: {} },
    'bare-app': { url: ready.appUrl, method: 'GET', path: '/bench/bare', headers: {} },
    'pg-min': { url: ready.appUrl, method: 'POST', path: '/bench/pg-min', headers: json, bodies, tokens: ready.tokens },
    snapshot: { url: ready.appUrl, method: 'POST', path: '/api/v1/companies/snapshot', headers: json, bodies, tokens: ready.tokens },
  };
  if (only.includes('search')) {
    const h = createDatabase(url, { max: 2, applicationName: 'regwatch-bench-measure' });
    const workload = await buildWorkload(h, 1200);
    await h.close();
    targets.search = {
      url: ready.appUrl,
      method: 'GET',
      headers: {},
      paths: workload.map((w) => `/api/v1/companies/search?${queryString(w.query)}`),
      tokens: ready.tokens,
    };
  }

  const backends = async () =>
    (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [APP_NAME])).rows.map((r) => r.pid);
  // Transactions committed in the benchmark's database (the statistics lag by up to half a second).
  const commits = async () => {
    await new Promise((r) => setTimeout(r, 600));
    const { rows } = await admin.query<{ n: string }>(
      'SELECT pg_stat_clear_snapshot(), xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]!.n);
  };
  const results: Record<string, unknown> = {};
  try {
    for (const name of only) {
      const spec = targets[name];
      if (!spec) continue;
      if (warmup > 0) await runLoad({ ...spec, connections, durationSeconds: warmup });
      if (statements) await admin.query('SELECT pg_stat_statements_reset()');
      const commits0 = await commits();
      const before = new Map((await backends()).map((pid) => [pid, cpuMs(pid)] as const));
      const api0 = cpuMs(serverPid);
      const m0 = machineTicks();
      const t0 = performance.now();
      if (profile) await command('prof-start');
      const r: LoadResult = await runLoad({ ...spec, connections, durationSeconds: seconds });
      const wall = (performance.now() - t0) / 1000;
      const m1 = machineTicks();
      const apiMs = cpuMs(serverPid) - api0;
      let pgMs = 0;
      for (const pid of new Set([...before.keys(), ...(await backends())])) pgMs += Math.max(0, cpuMs(pid) - (before.get(pid) ?? 0));
      const commitsMade = (await commits()) - commits0;
      if (profile) await command(`prof-stop ${name}`);
      const per = (x: number) => Number((x / Math.max(1, r.total)).toFixed(3));
      const row = {
        target: name,
        requests_per_s: r.requestsPerSecond,
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
        api_cpu_ms_per_req: per(apiMs),
        pg_cpu_ms_per_req: per(pgMs),
        commits_per_req: per(commitsMade),
        requests_per_core_s: Math.round(r.total / Math.max(0.001, (apiMs + pgMs) / 1000)),
        api_cores: Number((apiMs / 1000 / wall).toFixed(2)),
        pg_cores: Number((pgMs / 1000 / wall).toFixed(2)),
        machine_busy: Number(((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)).toFixed(2)),
        loadavg_1m: Number(loadavg()[0]!.toFixed(2)),
      };
      results[name] = row;
      console.log(JSON.stringify(row));
      if (statements) {
        const { rows } = await admin.query<{ calls: string; plan: number; exec: number; rows: string; query: string }>(`
          SELECT s.calls, s.mean_plan_time AS plan, s.mean_exec_time AS exec, s.rows, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 110) AS query
            FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
           WHERE d.datname = current_database() AND s.calls > 10
           ORDER BY s.total_exec_time + s.total_plan_time DESC LIMIT 8`);
        for (const s of rows)
          console.log(`   ${String(s.calls).padStart(7)} calls  plan ${s.plan.toFixed(3)} ms  exec ${s.exec.toFixed(3)} ms  ${s.query}`);
      }
    }
  } finally {
    server.stdin!.end();
    await new Promise((r) => server.once('exit', r));
    await admin.end();
  }
  console.log(JSON.stringify({ finished: new Date().toISOString(), loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }));
}

if (process.argv.includes('--serve')) await serve();
else await main();
