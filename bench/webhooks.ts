/**
 * Webhook delivery: a day's events fanned out to 1,000 endpoints on a local receiver. Reports
 * deliveries a second, the delay from an event's write (its batch's transaction, which commits
 * it) to the receiver's 2xx (p50/p99), the CPU of Node.js and PostgreSQL, and the daily run's
 * time with every endpoint enabled while the worker delivers and with none enabled.
 *
 *   node --import tsx bench/webhooks.ts [--companies 100000] [--accounts 1000] [--events 100000] [--rounds 1]
 *
 * Four days after the load: day 1 (webhooks on) is the first change of the changing companies
 * (7 events every 6 companies), days 2-4 (off, on, off) change them again (13 events every 6:
 * the previous day's change undone and a new one), so days 2, 3 and 4 have the same number of
 * events and the run-time comparison takes them; the CPU a delivery is day 3's. `--rounds R`
 * makes R such days with webhooks, each between two without (days 2 to 2R+2), as the run-time
 * comparison on a shared machine is noisy. `--events N` is that number (the issue's
 * workload, 100,000, by default): round(N * 6 / 13) companies change each day, spread evenly over
 * the accounts (the first ones of each account's watched companies), at most every company
 * (`--events 216667` at 100,000 companies: every company changes, the stress day measured before).
 * Each day's file is a full export (every company; the others as they were).
 *
 * Three processes, as in production: this one runs the daily runs (as the `regwatch` command would),
 * the job worker (fan-out and delivery) runs in its own (bench/webhooks-worker.ts; `--worker-nice N`
 * lowers its priority), and so does the receiver (bench/webhooks-receiver.ts); each one's CPU is printed.
 * `--accounts` accounts each watch companies/accounts companies, one endpoint each, so every event
 * is one delivery.
 * Database: DATABASE_URL when set, else an embedded PostgreSQL (bench/registry-db.ts), whose CPU
 * is then printed too.
 *
 * Two switches for the analysis of the run's slowdown: `--pause-worker` stops the worker process
 * (SIGSTOP) for each daily run and lets it go on (SIGCONT) when the run returns: what sending
 * nothing during a run gives (its fan-out and deliveries all after it; its PostgreSQL backends
 * idle). `BENCH_WAITS=1` samples pg_stat_activity every 5 ms during each run and prints what the
 * run's active backends were waiting on (`waits`: samples by wait event, `cpu` for none), the
 * worker's backends left out.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { SCHED_IDLE, setIdlePolicy, threadPoliciesOf } from '../src/lib/idle-priority.ts';
import { watchCompanies } from '../src/modules/watchlist/repo.ts';
import { generateSecret } from '../src/modules/webhooks/signing.ts';
import { runDaily } from '../src/registry/daily.ts';
import { createFileSource } from '../src/registry/sources/file.ts';
import { pageTableIsolation, processCpuSeconds } from './machine.ts';
import { argValue, openBenchDatabase, printStatementStats, statementStats } from './registry-db.ts';
import { benchSnapshot, changedSnapshot, speedReference, writeBenchFile } from './registry-fixtures.ts';

const companies = Number(argValue('companies', '100000'));
const accounts = Number(argValue('accounts', '1000'));
const targetEvents = Number(argValue('events', '100000'));
const rounds = Number(argValue('rounds', '1'));
/** Companies that change each day (13 events every 6 on days 2-4). */
const changing = Math.min(companies, Math.round((targetEvents * 6) / 13));
/** Company numbers (benchSnapshot's n) that change each day: set once the accounts watch theirs. */
const changes = new Uint8Array(companies);
const dir = mkdtempSync(join(tmpdir(), 'regwatch-webhooks-'));
// What the figures depend on most (docs/benchmarks.md, "Webhooks: fan-out and delivery").
console.log(JSON.stringify({ speed_reference_us: speedReference(), ...pageTableIsolation() }));
// `--keep`: the database is kept (to study its statements afterwards), its name printed.
const keep = process.argv.includes('--keep');
const bench = await openBenchDatabase(`regwatch_bench_webhooks_${process.pid}`, { keep });
if (keep) console.log(JSON.stringify({ kept_database: `regwatch_bench_webhooks_${process.pid}` }));
const db = bench.handle.db;

// The receiver, in its own process (bench/webhooks-receiver.ts): when each event's message was answered.
const answeredAt = new Map<number, number>();
let received = 0;
const receiver = fork(fileURLToPath(new URL('./webhooks-receiver.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'] });
let cpuAnswer: ((us: number) => void) | null = null;
receiver.on('message', (m: { answered?: number[]; received?: number; cpu?: number }) => {
  if (m.answered) for (let i = 0; i < m.answered.length; i += 2) answeredAt.set(m.answered[i]!, m.answered[i + 1]!);
  if (m.received) received += m.received;
  if (m.cpu !== undefined) cpuAnswer?.(m.cpu);
});
const [{ port }] = (await once(receiver, 'message')) as [{ port: number }];
// `--receiver-nice N`: the receiver (a stand-in for the integrators' servers, which are not on the
// run's machine in production) at nice N, for the analysis of the run's slowdown.
const receiverNice = Number(argValue('receiver-nice', '0'));
if (receiverNice !== 0) setPriority(receiver.pid!, receiverNice);
/**
 * `--sched-idle`: the worker, its PostgreSQL backends and the receiver, every thread of each, under
 * Linux's SCHED_IDLE policy: they run only on a core nothing else wants, and a waking task of the
 * run preempts them at once, where nice 19 still lets them finish a time slice. The worker and its
 * backends go through the product's code (src/lib/idle-priority.ts, WORKER_IDLE_PRIORITY=true in
 * the worker: bench/webhooks-worker.ts), so this measures what ships; the receiver (a stand-in for
 * the integrators' servers) is put there by `chrt` here. Each worker backend's policy is checked
 * as it is sampled (`worker_backends_idle` in each day's line).
 */
const schedIdle = process.argv.includes('--sched-idle');
const pauseWorker = process.argv.includes('--pause-worker');
if (schedIdle) await setIdlePolicy(receiver.pid!);
const receiverUrl = `http://127.0.0.1:${port}`;
/** The receiver's CPU so far, microseconds. */
const receiverCpu = () =>
  new Promise<number>((resolve) => {
    cpuAnswer = resolve;
    receiver.send({ cmd: 'cpu' });
  });

async function writeDay(date: string, dayNumber: number): Promise<string> {
  const file = join(dir, `${date}.ndjson`);
  const out = createWriteStream(file);
  for (let n = 0; n < companies; n++) {
    const line = JSON.stringify(changes[n] ? changedSnapshot(n, dayNumber) : benchSnapshot(n));
    if (!out.write(line + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return file;
}

/**
 * The CPU seconds of the worker's PostgreSQL backends (application_name bench-webhooks-worker,
 * bench/webhooks-worker.ts) so far, from /proc: each backend's last sample is kept, so one that
 * closes between samples counts up to its last sample (sampled every second while a day runs).
 */
const workerBackendSeconds = new Map<number, number>();
/**
 * `--worker-backends-nice N`: the worker's PostgreSQL backends are given nice N as they are first
 * seen (an analysis of the run's slowdown: what is left of it when every process of the delivery
 * path yields the cores to the run; only possible with the database on the same machine).
 */
const workerBackendsNice = Number(argValue('worker-backends-nice', '0'));
const reniced = new Set<number>();
/** The worker's backends seen, and of them those under SCHED_IDLE (with `--sched-idle`, put there by the worker itself). */
const backendPolicies = new Map<number, boolean>();
async function workerBackendCpu(): Promise<number> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE application_name = 'bench-webhooks-worker'`.execute(db);
  for (const { pid } of rows) {
    // Gone since the query: its last sample stands.
    const seconds = processCpuSeconds(pid);
    if (seconds === null) continue;
    workerBackendSeconds.set(pid, seconds);
    const policies = threadPoliciesOf(pid);
    if (policies)
      backendPolicies.set(
        pid,
        [...policies.values()].every((p) => p === SCHED_IDLE),
      );
    if (workerBackendsNice !== 0 && !reniced.has(pid)) {
      try {
        setPriority(pid, workerBackendsNice);
        reniced.add(pid);
      } catch {
        // Gone since the sample.
      }
    }
  }
  let total = 0;
  for (const s of workerBackendSeconds.values()) total += s;
  return total;
}

const percentile = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

// The job worker (fan-out and delivery), in its own process: bench/webhooks-worker.ts.
const workerNice = argValue('worker-nice', '0');
/** `--worker-cpu-prof DIR`: the worker writes a V8 CPU profile (.cpuprofile) into DIR when it exits. */
const workerProf = argValue('worker-cpu-prof', '');
let worker: ChildProcess | null = null;
let statsAnswer: ((s: { cpu: number; outcomes: Record<string, number> }) => void) | null = null;
const workerStats = () =>
  new Promise<{ cpu: number; outcomes: Record<string, number> }>((resolve) => {
    statsAnswer = resolve;
    worker!.send({ cmd: 'stats' });
  });

/** BENCH_WAITS=1: what the run's active backends wait on, sampled every 5 ms until `stop` (the header). */
function sampleRunWaits(): { stop(): Promise<Record<string, number>> } {
  const counts = new Map<string, number>([['samples', 0]]);
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const { rows } = await sql<{ w: string }>`
        SELECT coalesce(wait_event_type || ':' || wait_event, 'cpu') AS w FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND application_name <> 'bench-webhooks-worker'
          AND pid <> pg_backend_pid() AND state = 'active'`.execute(db);
      for (const r of rows) counts.set(r.w, (counts.get(r.w) ?? 0) + 1);
      counts.set('samples', counts.get('samples')! + 1);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).slice(0, 12));
    },
  };
}

async function day(date: string, dayNumber: number, webhooks: boolean) {
  const file = await writeDay(date, dayNumber);
  await sql`UPDATE webhook_endpoints SET status = ${webhooks ? 'enabled' : 'disabled'}`.execute(db);
  await sql`CHECKPOINT`.execute(db);
  answeredAt.clear();
  received = 0;
  if (statementStats) await sql`SELECT pg_stat_statements_reset()`.execute(db);
  const cpu0 = process.cpuUsage();
  const recv0 = await receiverCpu();
  const worker0 = (await workerStats()).cpu;
  const pg0 = bench.postgresCpuSeconds();
  const wpg0 = await workerBackendCpu();
  const sampler = setInterval(() => void workerBackendCpu(), 1000);
  const waits = process.env.BENCH_WAITS ? sampleRunWaits() : null;
  const t0 = performance.now();
  const wall0 = Date.now();
  if (pauseWorker) worker!.kill('SIGSTOP');
  const s = await runDaily(db, { date, source: createFileSource(file), sourceKey: `webhooks:${date}` });
  if (pauseWorker) worker!.kill('SIGCONT');
  const runSeconds = (performance.now() - t0) / 1000;
  /** The run's commit: runDaily returns once the run's completion is committed. */
  const runEnd = Date.now();
  const runWaits = await waits?.stop();
  const cpuRun = process.cpuUsage(cpu0);
  const pgRun = bench.postgresCpuSeconds();
  const wpgRun = await workerBackendCpu();
  rmSync(file);
  const seconds = (us: number) => Number((us / 1e6).toFixed(2));
  const result: Record<string, unknown> = {
    date,
    webhooks,
    events: s.events,
    run_seconds: Number(runSeconds.toFixed(1)),
    run_node_cpu_s: seconds(cpuRun.user + cpuRun.system),
    run_pg_cpu_s: pgRun === null ? null : Number((pgRun - pg0!).toFixed(1)),
    // Of which the worker's backends (fan-out, dispatcher, job polling); the rest is the run's own and PostgreSQL's background.
    run_worker_pg_cpu_s: seconds((wpgRun - wpg0) * 1e6),
    ...(runWaits ? { waits: runWaits } : {}),
  };
  if (webhooks) {
    const {
      rows: [want],
    } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM watchlist_feed WHERE event_date = ${date}::date`.execute(db);
    const deadline = Date.now() + 600_000;
    while (answeredAt.size < want!.n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 200)); // the receiver's last report of repeats
    const { rows } = await sql<{
      id: number;
      at: Date;
    }>`SELECT id::float8 AS id, created_at AS at FROM events WHERE event_date = ${date}::date`.execute(db);
    const delays = rows
      .filter((r) => answeredAt.has(r.id))
      .map((r) => (answeredAt.get(r.id)! - r.at.getTime()) / 1000)
      .sort((a, b) => a - b);
    let last = wall0;
    for (const t of answeredAt.values()) if (t > last) last = t;
    // The delays by when their events committed, in fifths of the run's events: whether the
    // p99 is the early events waiting for the run or the late ones waiting for the drain.
    const byCommit = rows.filter((r) => answeredAt.has(r.id)).sort((a, b) => a.at.getTime() - b.at.getTime());
    // And the message ids each fifth got: whether the fan-out created them in the events' order.
    // By the day's range of event ids: a join to the day's events was planned as a nested loop
    // once (minutes on 2026-11-29 10:00, the statistics stale after a day's inserts).
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of rows) {
      if (r.id < lo) lo = r.id;
      if (r.id > hi) hi = r.id;
    }
    const { rows: messageIds } = await sql<{ event_id: number; id: number }>`
      SELECT d.event_id::float8 AS event_id, d.id::float8 AS id FROM webhook_deliveries d WHERE d.event_id BETWEEN ${lo} AND ${hi}`.execute(
      db,
    );
    const messageOf = new Map(messageIds.map((m) => [m.event_id, m.id]));
    const fifths = [0, 1, 2, 3, 4].map((k) => {
      const part = byCommit.slice(Math.floor((k * byCommit.length) / 5), Math.floor(((k + 1) * byCommit.length) / 5));
      const d = part.map((r) => (answeredAt.get(r.id)! - r.at.getTime()) / 1000).sort((a, b) => a - b);
      const answered = part.map((r) => answeredAt.get(r.id)!).sort((a, b) => a - b);
      return {
        committed_s: Number(((part[0]!.at.getTime() - wall0) / 1000).toFixed(1)),
        answered_s: [percentile(answered, 1), percentile(answered, 99)].map((t) => Number(((t - wall0) / 1000).toFixed(1))),
        p99_s: Number(percentile(d, 99).toFixed(2)),
        message_ids: [
          Math.min(...part.map((r) => messageOf.get(r.id) ?? Infinity)),
          Math.max(...part.map((r) => messageOf.get(r.id) ?? -Infinity)),
        ],
      };
    });
    // The issue's wording ("from the daily run's commit to the receiver's 2xx"): from the run's
    // completion, when DECISIONS 8 lets its messages go. `delays` counts from each event's own
    // batch commit, earlier, and is the stricter measure.
    const fromRun = [...answeredAt.values()].map((t) => (t - runEnd) / 1000).sort((a, b) => a - b);
    const cpuAll = process.cpuUsage(cpu0);
    const pgAll = bench.postgresCpuSeconds();
    const wpgAll = await workerBackendCpu();
    const recvAll = (await receiverCpu()) - recv0;
    const workerAll = await workerStats();
    Object.assign(result, {
      deliveries: answeredAt.size,
      expected: want!.n,
      requests: received,
      deliveries_per_second: Math.round(answeredAt.size / ((last - wall0) / 1000)),
      delay_p50_s: Number(percentile(delays, 50).toFixed(2)),
      delay_p99_s: Number(percentile(delays, 99).toFixed(2)),
      delay_from_run_commit_p50_s: Number(percentile(fromRun, 50).toFixed(2)),
      delay_from_run_commit_p99_s: Number(percentile(fromRun, 99).toFixed(2)),
      seconds_to_last: Number(((last - wall0) / 1000).toFixed(1)),
      delay_by_commit_fifth: fifths,
      // CPU from the run's start to the last delivery, and the part after the run, a delivery.
      node_cpu_s: seconds(cpuAll.user + cpuAll.system),
      pg_cpu_s: pgAll === null ? null : Number((pgAll - pg0!).toFixed(1)),
      worker_pg_cpu_s: seconds((wpgAll - wpg0) * 1e6),
      worker_cpu_s: seconds(workerAll.cpu - worker0),
      receiver_cpu_s: seconds(recvAll),
      load: Number(loadavg()[0]!.toFixed(1)),
      worker_backends_idle: `${[...backendPolicies.values()].filter(Boolean).length} of ${backendPolicies.size}`,
      // Repeated requests (requests > deliveries) are retries of failed attempts when `retried` > 0.
      retried: (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.event_date = ${date}::date AND d.attempts > 1`.execute(db)
      ).rows[0]!.n,
      outcomes: workerAll.outcomes,
    });
  }
  clearInterval(sampler);
  return result;
}

try {
  const base = join(dir, 'base.ndjson');
  await writeBenchFile(base, 0, companies);
  await runDaily(db, { date: '2026-11-01', source: createFileSource(base), sourceKey: 'webhooks:load' });
  rmSync(base);
  const { rows: ids } = await sql<{ id: string; n: number }>`
    SELECT id, CASE primary_identifier_type WHEN 'KRS' THEN primary_identifier::int - 1 WHEN 'NIP' THEN left(primary_identifier, 8)::int - 10000000 END AS n
    FROM companies ORDER BY id`.execute(db);
  const per = Math.floor(ids.length / accounts);
  // The changing companies: account a's first k_a watched ones, the k_a summing to `changing`.
  for (let a = 0; a < accounts; a++) {
    const k = Math.floor(((a + 1) * changing) / accounts) - Math.floor((a * changing) / accounts);
    for (const r of ids.slice(a * per, a * per + Math.min(k, per))) {
      if (r.n === null || !(r.n >= 0 && r.n < companies)) throw new Error(`company ${r.id}: no bench number`);
      changes[r.n] = 1;
    }
  }
  for (let a = 0; a < accounts; a++) {
    const {
      rows: [acct],
    } = await sql<{ id: string }>`
      INSERT INTO accounts (user_ref, email, name, status) VALUES (${`HOOKS${String(a).padStart(7, '0')}`}, ${`hooks${a}@bench.test`}, 'bench', 'initialized') RETURNING id`.execute(
      db,
    );
    await db.transaction().execute(async (trx) => {
      await watchCompanies(
        trx,
        acct!.id,
        ids.slice(a * per, (a + 1) * per).map((r) => r.id),
        new Date('2026-11-01T12:00:00Z'),
      );
      const {
        rows: [ep],
      } = await sql<{ id: string }>`
        INSERT INTO webhook_endpoints (account_id, url, status) VALUES (${acct!.id}, ${`${receiverUrl}/e/${a}`}, 'disabled') RETURNING id`.execute(
        trx,
      );
      await sql`INSERT INTO webhook_secrets (endpoint_id, secret) VALUES (${ep!.id}, ${generateSecret()})`.execute(trx);
    });
  }
  await sql`VACUUM ANALYZE`.execute(db);
  worker = fork(fileURLToPath(new URL('./webhooks-worker.ts', import.meta.url)), [bench.url, workerNice, schedIdle ? 'idle' : ''], {
    execArgv: ['--import', 'tsx', ...(workerProf ? ['--cpu-prof', `--cpu-prof-dir=${workerProf}`] : [])],
  });
  worker.on('message', (m: { cpu?: number; outcomes?: Record<string, number> }) => {
    if (m.cpu !== undefined) statsAnswer?.({ cpu: m.cpu, outcomes: m.outcomes ?? {} });
  });
  const [ready] = (await once(worker, 'message')) as [{ idle: boolean }];
  if (schedIdle && !ready.idle) throw new Error('--sched-idle: the worker could not put itself under SCHED_IDLE');
  if (schedIdle)
    console.log(`worker threads under SCHED_IDLE: ${[...threadPoliciesOf(worker.pid!)!.values()].every((p) => p === SCHED_IDLE)}`);
  console.log(
    `${companies} companies; ${accounts} accounts, each watching ${per} with one endpoint; ${changes.reduce((x, y) => x + y, 0)} companies change each day (--events ${targetEvents})`,
  );
  const results: Record<string, unknown>[] = [];
  // The first day has fewer events (7 every 6 changing companies; later days 13): it is measured
  // with webhooks only; the run-time comparison takes the later days, off and on in turn
  // (`--rounds R`: R days with webhooks, each between two without).
  const plan = [true, ...Array.from({ length: rounds }, () => [false, true]).flat(), false];
  for (const [i, on] of plan.entries()) {
    const r = await day(`2026-11-${String(i + 2).padStart(2, '0')}`, i + 2, on);
    console.log(JSON.stringify(r));
    // BENCH_PG_STATS=1: PostgreSQL's time and WAL an event by statement, the day's run and deliveries together.
    if (statementStats) await printStatementStats(db, `day ${i + 2}`, r.events as number);
    results.push(r);
  }
  const later = results.slice(1);
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
  const runMean = (on: boolean) => mean(later.filter((r) => r.webhooks === on).map((r) => r.run_seconds as number));
  console.log(
    `daily run (days 2-${plan.length}): ${runMean(false).toFixed(1)} s without webhooks, ${runMean(true).toFixed(1)} s with (${((runMean(true) / runMean(false) - 1) * 100).toFixed(0)} %)`,
  );
  // CPU a delivery on the later days with webhooks: the worker's (fan-out and sending), the
  // receiver's, and PostgreSQL's less the mean of its CPU in the runs of the days either side
  // (the same events, no webhooks).
  const onDays = later.flatMap((r, i) => (r.webhooks ? [{ r, before: later[i - 1]!, after: later[i + 1]! }] : []));
  const n = onDays.reduce((x, d) => x + (d.r.deliveries as number), 0);
  const us = (pick: (d: (typeof onDays)[number]) => number) => Math.round((onDays.reduce((x, d) => x + pick(d), 0) * 1e6) / n);
  const pgKnown = onDays.every((d) => d.r.pg_cpu_s !== null);
  console.log(
    JSON.stringify({
      cpu_us_a_delivery: {
        days: onDays.map((d) => d.r.date),
        worker: us((d) => d.r.worker_cpu_s as number),
        receiver: us((d) => d.r.receiver_cpu_s as number),
        postgres: pgKnown
          ? us((d) => (d.r.pg_cpu_s as number) - ((d.before.run_pg_cpu_s as number) + (d.after.run_pg_cpu_s as number)) / 2)
          : null,
        // The worker's own backends only (no subtraction of a run measured apart, so less noise;
        // without the checkpointer's, WAL writer's and autovacuum's share).
        postgres_worker_backends: us((d) => d.r.worker_pg_cpu_s as number),
      },
      run_off_on_by_round: onDays.map((d) => [
        Number((((d.before.run_seconds as number) + (d.after.run_seconds as number)) / 2).toFixed(1)),
        d.r.run_seconds,
      ]),
      p50_p99_by_round: onDays.map((d) => [d.r.delay_p50_s, d.r.delay_p99_s]),
      from_run_commit_p50_p99_by_round: onDays.map((d) => [d.r.delay_from_run_commit_p50_s, d.r.delay_from_run_commit_p99_s]),
      load: loadavg().map((x) => Number(x.toFixed(1))),
    }),
  );
} finally {
  if (worker) {
    worker.disconnect();
    await once(worker, 'exit');
  }
  receiver.disconnect();
  await bench.dispose();
  rmSync(dir, { recursive: true, force: true });
}
