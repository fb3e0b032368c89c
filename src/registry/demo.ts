import { sql } from 'kysely';
import type { Log } from '../logger.ts';
import type { Runtime } from '../runtime.ts';
import type { RegistrySource } from './sources/source.ts';
import type { CompanySnapshot } from './model.ts';
import { storedIdentifierKey } from '../lib/identifiers.ts';
import { createSyntheticSource, type SyntheticSource } from './sources/synthetic.ts';
import type { DailyProgress } from './daily/options.ts';
import { runDaily } from './daily/run.ts';
import type { DailyRunSummary } from './daily/summary.ts';
import { hasAnyCompany } from './store/companies-repo.ts';
import type { RegistryExecutor } from './store/executor.ts';
import { DEFAULT_SYNTHETIC_SEED, syntheticRegistrySize } from './sources/resolve.ts';

/**
 * Demo data: a synthetic registry so that a fresh embedded install has companies to search,
 * events to read and statistics to show. Everything goes through the ordinary daily run, so the
 * demo's history is the same kind of data a real registry produces.
 */

/** The whole registry as it stands on a date (companies registered after the epoch included), as a source. */
function wholeRegistry(registry: SyntheticSource): RegistrySource {
  return { name: 'synthetic', snapshotsForDate: (date, options) => registry.allSnapshots(date, { ...options, includeRegistered: true }) };
}

/** Days of change history the demo builds after its first load (the load day comes before them). */
export const DEMO_HISTORY_DAYS = 4;
const DEMO_LOCK = 7_307_900_002;

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

export interface SeedOptions {
  count: number;
  seed: number | string;
  /** The day the companies are recorded as first seen. */
  date: string;
  onProgress?: (p: DailyProgress) => void;
  signal?: AbortSignal;
  logger?: Log;
}

/** Generated companies checked against the stored ones at a time. */
const SEED_CHECK_CHUNK = 1000;
/** Chunks of primaries whose keys the substitutes are checked against besides the stored ones (a run has a few 2,000-line batches in flight). */
const RECENT_PRIMARY_CHUNKS = 20;

/**
 * The synthetic registry's companies for `date`, each with no identifier of a company already
 * stored (one a file, a live source or another seed brought in). Identifiers are unique within one
 * seed, but two seeds draw from the same ranges (REGON's 10^8, KRS's 2^20), so a load next to the
 * demo registry met a few hundred companies per 100,000: each became an update of a stranger,
 * with its events, instead of a new company. Such a company is left out and a company of a derived
 * seed (`SEED:1`, `SEED:2`, …) takes its place, so the load still adds `count`. A company this
 * load stored before it was interrupted owns all its identifiers itself and comes back as it is.
 */
async function* freshSyntheticCompanies(
  db: RegistryExecutor,
  options: SeedOptions,
  date: string,
  runOptions?: { signal?: AbortSignal },
): AsyncGenerator<CompanySnapshot> {
  const primary = createSyntheticSource({ seed: options.seed, size: options.count }).allSnapshots(date, runOptions);
  // Nothing stored: nothing to meet (the first load of an empty registry, at full speed).
  if (!(await hasAnyCompany(db))) {
    yield* primary;
    return;
  }
  let missing = 0;
  // Keys a substitute must not repeat: the other substitutes', and the last primaries', which may
  // not be stored yet when the substitutes are checked (the run writes a few batches behind its
  // reading). Two seeds do share some identifiers index for index (a company turned into a KRS
  // form gets KRS 50,000,000 + its index), so a substitute meets its own load's primary there.
  const substituteKeys = new Set<string>();
  const recentChunks: string[][] = [];
  let recentPrimaryKeys: Set<string> | null = null;
  const fresh = async function* (source: AsyncIterable<CompanySnapshot>, substitutes: boolean) {
    let chunk: CompanySnapshot[] = [];
    const flush = async function* () {
      const keysOf = (s: CompanySnapshot) => s.identity.identifiers.map((x) => storedIdentifierKey(x.type, x.value));
      const owners = await identifierOwners(db, chunk.flatMap(keysOf));
      for (const snapshot of chunk) {
        if (substitutes && missing === 0) return;
        const keys = keysOf(snapshot);
        const ids = new Set(keys.map((k) => owners.get(k)?.companyId));
        const none = ids.size === 1 && ids.has(undefined);
        // Stored by this load before: one company, holding exactly these identifiers (a stranger
        // sharing the only identifier of a company that has one holds others besides).
        const owner = ids.size === 1 ? owners.get(keys[0]!) : undefined;
        const own = owner !== undefined && owner.keys.size === keys.length && keys.every((k) => owner.keys.has(k));
        if (substitutes) {
          recentPrimaryKeys ??= new Set(recentChunks.flat());
          if (keys.some((k) => substituteKeys.has(k) || recentPrimaryKeys!.has(k))) continue;
        }
        if (!own && !none) {
          if (!substitutes) missing++;
          continue;
        }
        if (substitutes) {
          missing--;
          for (const k of keys) substituteKeys.add(k);
        }
        yield snapshot;
      }
      if (!substitutes) {
        recentChunks.push(chunk.flatMap(keysOf));
        if (recentChunks.length > RECENT_PRIMARY_CHUNKS) recentChunks.shift();
      }
      chunk = [];
    };
    for await (const snapshot of source) {
      chunk.push(snapshot);
      if (chunk.length >= SEED_CHECK_CHUNK) yield* flush();
      if (substitutes && missing === 0) return;
    }
    if (chunk.length > 0) yield* flush();
  };
  yield* fresh(primary, false);
  for (let round = 1; missing > 0 && round <= 10; round++) {
    const substitute = createSyntheticSource({ seed: `${options.seed}:${round}`, size: options.count });
    yield* fresh(substitute.allSnapshots(date, runOptions), true);
  }
}

/** The company owning each of `keys` (company_identifiers) that is stored, with every key that company holds. */
async function identifierOwners(db: RegistryExecutor, keys: string[]): Promise<Map<string, { companyId: string; keys: Set<string> }>> {
  if (keys.length === 0) return new Map();
  const { rows } = await sql<{ key: string; company_id: string }>`
    SELECT key::text AS key, company_id::text AS company_id FROM company_identifiers
    WHERE company_id IN (SELECT company_id FROM company_identifiers WHERE key = ANY(${keys}::bigint[]))`.execute(db);
  const held = new Map<string, Set<string>>();
  for (const r of rows) {
    let set = held.get(r.company_id);
    if (!set) held.set(r.company_id, (set = new Set()));
    set.add(r.key);
  }
  return new Map(rows.map((r) => [r.key, { companyId: r.company_id, keys: held.get(r.company_id)! }]));
}

/**
 * Loads `count` generated companies, every one new (freshSyntheticCompanies), as a run of `date`
 * under the key `seed:SEED:COUNT`, so the same command twice adds nothing and an interrupted load
 * resumes.
 */
export async function seedSyntheticCompanies(db: RegistryExecutor, options: SeedOptions): Promise<DailyRunSummary> {
  const base: RegistrySource = { name: 'synthetic', snapshotsForDate: (date, o) => freshSyntheticCompanies(db, options, date, o) };
  return runDaily(db, {
    date: options.date,
    source: base,
    sourceKey: `seed:${options.seed}:${options.count}`,
    expectedTotal: options.count,
    onProgress: options.onProgress,
    signal: options.signal,
    logger: options.logger,
  });
}

export interface DemoResult {
  companies: number;
  days: string[];
  events: number;
  durationMs: number;
}

/**
 * The demo's runs so far: the day of its first run (the load) and whether a run of the load's
 * window (the load and its DEMO_HISTORY_DAYS) is unfinished (stopped or killed midway).
 */
async function demoRuns(db: RegistryExecutor, sourceKey: string): Promise<{ loadDay: string | null; unfinished: boolean }> {
  const { rows } = await sql<{ load_day: string | null; unfinished: boolean }>`
    WITH first AS (SELECT min(run_date) AS d FROM daily_runs WHERE source_key = ${sourceKey} AND kind = 'daily')
    SELECT first.d::text AS load_day, EXISTS (
      SELECT 1 FROM daily_runs r WHERE r.source_key = ${sourceKey} AND r.kind = 'daily' AND r.status <> 'completed'
        AND r.run_date <= first.d + ${DEMO_HISTORY_DAYS}::int) AS unfinished
    FROM first`.execute(db);
  return { loadDay: rows[0]?.load_day ?? null, unfinished: rows[0]?.unfinished ?? false };
}

/**
 * What is left of the demo: null when nothing is (a database with companies whose demo, if it
 * made one, is whole), else the day to resume its load from (null: a fresh load).
 */
async function demoToDo(db: RegistryExecutor, sourceKey: string): Promise<{ resumeFrom: string | null } | null> {
  const runs = await demoRuns(db, sourceKey);
  if (runs.loadDay !== null) return runs.unfinished ? { resumeFrom: runs.loadDay } : null;
  return (await hasAnyCompany(db)) ? null : { resumeFrom: null };
}

/**
 * On the embedded database with no companies, while `synthetic` is a configured source (the
 * embedded default; REGISTRY_SOURCES set without it, or set but empty, means no synthetic data):
 * the synthetic registry (config.demoCompanies companies) loaded as of DEMO_HISTORY_DAYS + 1 days
 * ago, then one daily run of synthetic changes for each later day up to yesterday. Those are the
 * runs the scheduled `synthetic` run would have made, under the same keys, so it carries on from
 * there. A load stopped midway (`signal`, at a stop of the server, or the process killed) is
 * resumed by the next call, from the day it started. Null when nothing was done.
 */
export async function ensureDemoData(runtime: Runtime, options: { today?: string; signal?: AbortSignal } = {}): Promise<DemoResult | null> {
  const { config, logger } = runtime;
  const db = runtime.database.db as unknown as RegistryExecutor;
  if (!runtime.embedded || config.demoCompanies <= 0 || !config.registrySources.includes('synthetic')) return null;
  const sourceKey = `synthetic:${DEFAULT_SYNTHETIC_SEED}`;
  if ((await demoToDo(db, sourceKey)) === null) return null;

  return db.connection().execute(async (conn) => {
    // Two processes starting on one fresh database: one loads, the other goes on without waiting.
    const { rows } = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${DEMO_LOCK}::bigint) AS ok`.execute(conn);
    if (!rows[0]!.ok) return null;
    try {
      const todo = await demoToDo(db, sourceKey);
      if (todo === null) return null;
      const started = Date.now();
      const today = options.today ?? new Date().toISOString().slice(0, 10);
      const size = syntheticRegistrySize(config);
      const registry = createSyntheticSource({ seed: DEFAULT_SYNTHETIC_SEED, size });
      const resumed = todo.resumeFrom;
      const loadDay = resumed ?? addDays(today, -(DEMO_HISTORY_DAYS + 1));
      logger.info(
        { companies: size, from: loadDay },
        resumed ? 'resuming the demo data load stopped midway' : 'loading demo data: a synthetic registry with a few days of history',
      );

      const { signal } = options;
      // Days already completed are no-ops (a completed run is not run again).
      const load = await runDaily(db, { date: loadDay, source: wholeRegistry(registry), sourceKey, signal });
      const days = [loadDay];
      let events = 0;
      for (let i = 1; i <= DEMO_HISTORY_DAYS; i++) {
        const day = addDays(loadDay, i);
        const run = await runDaily(db, { date: day, source: registry, sourceKey, signal });
        days.push(day);
        events += run.events;
      }
      const result: DemoResult = { companies: load.new, days, events, durationMs: Date.now() - started };
      logger.info(
        { companies: result.companies, days: result.days, events: result.events, ms: result.durationMs },
        `loaded demo data: ${result.companies} synthetic companies and ${result.events} events over ${days.length} days (DEMO_COMPANIES=0 turns this off)`,
      );
      return result;
    } finally {
      await sql`SELECT pg_advisory_unlock(${DEMO_LOCK}::bigint)`.execute(conn);
    }
  });
}
