import { connectionOf, type DatabaseConnection } from '../../db/database.ts';
import type { Log } from '../../logger.ts';
import type { RegistryExecutor } from '../../registry/store.ts';
import type { SearchFilters } from './filters.ts';
import {
  nextFollowStep,
  planFollowStep,
  readIndexCursor,
  runsAskedOf,
  runsOf,
  type FollowStep,
  type IndexCursor,
} from './index-follower.ts';
import { readDataAsOf, readIndexRowsInOrder, readRunChangedRows, searchCompaniesSql, type RunProgress, type RunsAsked } from './repo.ts';
import type { SearchIndex } from './search-index.ts';
import { SearchIndexBuilder } from './search-index-builder.ts';
import type { IndexAnswer, IndexRow } from './search-index-rows.ts';
import { startInExportedSnapshot } from '../../db/snapshot-worker.ts';
import { startWorkerBuild, type WorkerBuild } from './search-index-worker.ts';
import { yieldToEventLoop } from '../../lib/event-loop.ts';

/**
 * Keeps the in-memory search index of this process in step with the database, and answers
 * searches from it, or from SQL while there is none yet (docs/search.md, "Freshness").
 *
 * Companies change only through runs (daily runs and on-demand imports), and the index follows
 * them (index-follower.ts): for each search, and every `followEveryMs`, one small query on
 * daily_runs says which runs finished since (before the answer, or, for a paid search, inside the
 * statement that reads its page, after it: `answerUnchecked`, `confirm`). Their companies are read again and applied to the
 * index as a delta, at once, when they changed up to `maxDelta` companies (DECISIONS 9: 50,000);
 * a larger change starts a full rebuild, and until it is swapped in the index stays exactly as it
 * was (later runs wait for the rebuild too), so an answer always reflects whole runs up to its
 * `dataAsOf`, never part of a day. A delta grown past `maxDelta` is folded into a rebuild in the
 * background, answering from the delta meanwhile.
 *
 * A change is applied to a copy of the index's overlay (search-index-delta.ts) and swapped in
 * whole; a rebuild is swapped in only once it has caught up with the runs that finished while it
 * was built. Full builds run in a worker thread (search-index-worker.ts) that reads the companies
 * over a connection of its own, in the snapshot of this thread's transaction that read the
 * cursor: this thread reads none of the rows.
 */

/** Companies read per query when a delta is applied (parsed on this thread without a pause: about a millisecond). */
const DELTA_CHUNK = 1_000;

export interface SearchEngineStatus {
  engine: 'memory' | 'sql';
  /** Companies in the index; null while there is none. */
  companies: number | null;
  /** Bytes of the index's arrays. */
  bytes: number | null;
  buildMs: number | null;
  /** Of buildMs: reading the rows from PostgreSQL (and, in the worker, parsing them meanwhile), then finishing the index and catching up. */
  buildReadMs: number | null;
  builtAt: Date | null;
  rebuilding: boolean;
  /** Companies in the index's delta (applied since its last full build). */
  delta: number | null;
  /** The date of the latest completed daily run the index reflects. */
  dataAsOf: string | null;
  /** Companies read ahead from runs in progress. */
  readAhead: number;
}

export type SearchAnswer = IndexAnswer & { engine: 'memory' | 'sql'; dataAsOf: string | null };

/**
 * An answer from the serving index before its follow check (`answerUnchecked`): it stands once
 * `confirm` has seen the runs `asked` names as read by a statement that started after the search
 * arrived.
 */
export interface UncheckedAnswer {
  readonly answer: SearchAnswer;
  /** The follow check to run (findRunProgress's arguments), in a statement started after the search arrived. */
  readonly asked: RunsAsked;
  readonly index: SearchIndex;
  readonly cursor: IndexCursor;
  readonly filters: SearchFilters;
  readonly offset: number;
  readonly limit: number;
}

export interface CompanySearchEngine {
  /** The answer, after a follow check of its own that started after the call (one query, shared by concurrent searches). */
  search(filters: SearchFilters, offset: number, limit: number): Promise<SearchAnswer>;
  /**
   * The serving index's answer at once, without a follow check: the caller runs the check
   * (`asked`) inside a statement of its own that starts after the search arrived, and hands the
   * runs it read to `confirm`. Null while there is no index (use `search`).
   */
  answerUnchecked(filters: SearchFilters, offset: number, limit: number): UncheckedAnswer | null;
  /**
   * Null when `runs` (the check of `unchecked.asked`, read after the search arrived) show no run
   * the answer does not reflect, so it stands; otherwise the answer once the index has followed
   * (a sync started now, as `search` would have waited for), or null when that left the index
   * and its day unchanged (a run too large for a delta: answered as of before it until the rebuild is in).
   */
  confirm(unchecked: UncheckedAnswer, runs: readonly RunProgress[]): Promise<SearchAnswer | null>;
  /** Starts the first build in the background (the API answers from SQL meanwhile) and follows the runs. */
  start(): void;
  /** Brings the index up to date now, waiting for any rebuild it needs (tests, benchmarks). */
  refresh(): Promise<void>;
  status(): SearchEngineStatus;
  stop(): Promise<void>;
}

export interface SearchEngineOptions {
  db: RegistryExecutor;
  logger: Log;
  /** `sql` never builds an index (every search runs in PostgreSQL). Default `memory`. */
  mode?: 'memory' | 'sql';
  /** Rows read per query while building (in a build in this thread, each chunk is a few milliseconds of its time). */
  chunkSize?: number;
  /**
   * Finished runs that changed more companies than this are applied by a rebuild instead of a
   * delta; a delta grown past it is folded into a rebuild in the background. Default 50,000.
   */
  maxDelta?: number;
  retryAfterMs?: number;
  /** Where a full build runs: `worker` (default: a worker thread) or `thread` (this one, between requests). */
  buildIn?: 'worker' | 'thread';
  /** How often a serving index looks for finished runs without waiting for a search; 0: only when searched. Default 1,000 ms. */
  followEveryMs?: number;
  /**
   * Answers kept per index (by filters and window; 0: none). An index never changes (a delta or a
   * rebuild makes a new one), so its answers are kept with it and dropped with it. Default 10,000.
   */
  answerCache?: number;
}

interface Loaded {
  index: SearchIndex;
  cursor: IndexCursor;
  builtAt: Date;
  buildMs: number;
  readMs: number;
}

/** Rows of a run still in progress, read ahead on the follow timer, so that its completion has only its last batches left to read. */
interface Prefetched {
  /** daily_run_changes rows covered. */
  changeIds: Set<string>;
  rows: Map<string, IndexRow>;
}

export function createCompanySearchEngine(options: SearchEngineOptions): CompanySearchEngine {
  const { db, logger } = options;
  const mode = options.mode ?? 'memory';
  const chunkSize = options.chunkSize ?? 4_000;
  // Companies per query of a worker's read (one string aggregated by PostgreSQL each).
  const workerChunkSize = options.chunkSize ?? 2_000;
  const maxDelta = options.maxDelta ?? 50_000;
  const retryAfterMs = options.retryAfterMs ?? 30_000;
  const buildIn = options.buildIn ?? 'worker';
  // The worker opens its own connection with the connection string of the serving database; a database not made by
  // createDatabase (none in this service) builds in this thread instead.
  const connection = connectionOf(db);
  if (mode === 'memory' && buildIn === 'worker' && connection === undefined)
    logger.warn({}, 'search index: no connection string for a worker; building in this thread');
  const followEveryMs = options.followEveryMs ?? 1_000;
  const answerCache = options.answerCache ?? 10_000;
  /** The answers of the serving index (keyed by it: a new index starts with none). */
  const answers = new WeakMap<SearchIndex, Map<string, IndexAnswer>>();

  function answerOf(index: SearchIndex, filters: SearchFilters, offset: number, limit: number): IndexAnswer {
    if (answerCache <= 0) return index.query(filters, offset, limit);
    let kept = answers.get(index);
    if (kept === undefined) answers.set(index, (kept = new Map()));
    // Filters are normalised (sorted lists, folded text): equal filter sets give one key.
    const key = `${offset}:${limit}:${JSON.stringify(filters)}`;
    const hit = kept.get(key);
    if (hit !== undefined) return hit;
    const answer = index.query(filters, offset, limit);
    if (kept.size >= answerCache) kept.delete(kept.keys().next().value!);
    kept.set(key, answer);
    return answer;
  }

  let loaded: Loaded | null = null;
  let building: Promise<void> | null = null;
  /** The worker of the build in progress (stop() ends it). */
  let buildWorker: WorkerBuild | null = null;
  let rebuildAgain = false;
  /** A change too large for a delta was seen: the index stays as it is until a rebuild is in. */
  let holding = false;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let followTimer: NodeJS.Timeout | null = null;
  let lastFailureAt = 0;
  const prefetched = new Map<number, Prefetched>();
  /** Bumped whenever the serving index changes: rows read ahead across a change may be older than it, and are dropped. */
  let generation = 0;
  let prefetching = false;

  async function readInThread(trx: RegistryExecutor): Promise<() => Promise<SearchIndex>> {
    const builder = new SearchIndexBuilder();
    await readIndexRowsInOrder(trx, chunkSize, async (rows) => {
      if (stopped) throw new Error('search engine stopped');
      for (const row of rows) builder.add(row);
      await yieldToEventLoop();
    });
    return () => builder.build(yieldToEventLoop);
  }

  /**
   * A build in a worker thread, which reads the companies itself (search-index-worker.ts): this
   * thread reads only the cursor, in a repeatable-read transaction whose snapshot the worker
   * imports (pg_export_snapshot), so the index and its cursor describe the same state. The
   * transaction stays open until the worker has imported it; nothing of the rows crosses this thread.
   */
  async function buildInWorker(started: number, connection: DatabaseConnection): Promise<Loaded> {
    try {
      const { cursor, build } = await startInExportedSnapshot(db, readIndexCursor, (snapshot) => {
        if (stopped) throw new Error('search engine stopped');
        return (buildWorker = startWorkerBuild(yieldToEventLoop, { connection, snapshot, chunkSize: workerChunkSize }));
      });
      let readMs = 0;
      void build.read.then(
        () => (readMs = Date.now() - started),
        () => {},
      );
      const index = await build.finish();
      return { index, cursor, builtAt: new Date(), buildMs: Date.now() - started, readMs };
    } finally {
      buildWorker = null;
    }
  }

  async function build(): Promise<Loaded> {
    const started = Date.now();
    if (buildIn === 'worker' && connection !== undefined) return buildInWorker(started, connection);
    // One snapshot for the whole read: the index and its cursor describe the same state. The
    // transaction ends once the rows are read; the index is finished after.
    const { cursor, finish } = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => ({ cursor: await readIndexCursor(trx), finish: await readInThread(trx) }));
    const readMs = Date.now() - started;
    const index = await finish();
    return { index, cursor, builtAt: new Date(), buildMs: Date.now() - started, readMs };
  }

  /**
   * `l` with the companies of a `changes` step applied. With `ahead`, the rows read ahead for
   * those runs are used and only their other batches read now (only for the serving index: rows
   * read ahead may be older than a fresh build).
   */
  async function applyChanges(
    l: Loaded,
    step: Extract<FollowStep, { kind: 'changes' }>,
    ahead: boolean,
  ): Promise<{ next: Loaded; rows: IndexRow[] }> {
    if (step.runIds.length === 0) return { next: { ...l, cursor: step.next }, rows: [] };
    const rows: IndexRow[] = [];
    const except: string[] = [];
    for (const runId of ahead ? step.runIds : []) {
      const p = prefetched.get(runId);
      if (!p) continue;
      for (const id of p.changeIds) except.push(id);
      for (const r of p.rows.values()) rows.push(r);
    }
    // Read after: a row read now replaces one read ahead (withChanges keeps a company's last row).
    await readRunChangedRows(
      db,
      step.runIds,
      DELTA_CHUNK,
      async (chunk) => {
        for (const r of chunk) rows.push(r);
        await yieldToEventLoop();
      },
      except,
    );
    return { next: { ...l, index: await l.index.withChanges(rows, yieldToEventLoop), cursor: step.next }, rows };
  }

  /** Swaps in a new serving index; `applied`: the runs and companies a delta applied (null: a rebuild). */
  function swapIn(next: Loaded, applied: { runIds: number[]; rows: readonly IndexRow[] } | null): void {
    loaded = next;
    generation++;
    if (applied === null) {
      prefetched.clear();
      return;
    }
    for (const runId of applied.runIds) prefetched.delete(runId);
    // Those companies were just read: anything read ahead for them before is older.
    for (const p of prefetched.values()) for (const r of applied.rows) p.rows.delete(r.id);
    for (const runId of prefetched.keys()) if (next.cursor.watch.get(runId) !== 'running') prefetched.delete(runId);
  }

  /** Reads ahead the companies written so far by the runs in progress (on the follow timer, never in a search's way). */
  async function readAhead(): Promise<void> {
    const current = loaded;
    if (current === null || holding || prefetching || stopped) return;
    prefetching = true;
    try {
      for (const [runId, state] of current.cursor.watch) {
        if (state !== 'running') continue;
        const p = prefetched.get(runId) ?? { changeIds: new Set<string>(), rows: new Map<string, IndexRow>() };
        // Too large for a delta: it will be rebuilt, so reading ahead would be wasted.
        if (p.rows.size > maxDelta) continue;
        const seen = generation;
        const rows: IndexRow[] = [];
        const { changeIds } = await readRunChangedRows(
          db,
          [runId],
          DELTA_CHUNK,
          async (chunk) => {
            for (const r of chunk) rows.push(r);
            await yieldToEventLoop();
          },
          [...p.changeIds],
        );
        if (seen !== generation || loaded !== current) return;
        for (const id of changeIds) p.changeIds.add(id);
        for (const r of rows) p.rows.set(r.id, r);
        prefetched.set(runId, p);
      }
    } finally {
      prefetching = false;
    }
  }

  function startBuild(): Promise<void> {
    if (mode === 'sql' || stopped) return Promise.resolve();
    if (building) {
      rebuildAgain = true;
      return building;
    }
    building = (async () => {
      do {
        rebuildAgain = false;
        try {
          let next = await build();
          // Catch up with the runs that finished while it was built, then swap it in.
          let tooLarge = false;
          for (;;) {
            const step = await nextFollowStep(db, next.cursor, { maxDelta });
            if (step.kind === 'current') break;
            if (step.kind === 'rebuild') {
              tooLarge = true;
              break;
            }
            next = (await applyChanges(next, step, false)).next;
          }
          if (stopped) return;
          swapIn(next, null);
          holding = tooLarge;
          if (tooLarge) rebuildAgain = true;
          logger.info(
            {
              companies: next.index.size,
              ms: next.buildMs,
              read_ms: next.readMs,
              mb: Math.round(next.index.byteSize / 1e6),
              data_as_of: next.cursor.dataAsOf,
              in: buildIn,
            },
            'search index built',
          );
        } catch (e) {
          if (stopped) return;
          lastFailureAt = Date.now();
          logger.error({ err: e instanceof Error ? e.message : String(e) }, 'search index build failed; searching in SQL meanwhile');
          retryTimer ??= setTimeout(() => {
            retryTimer = null;
            if (!stopped) void startBuild();
          }, retryAfterMs);
          retryTimer.unref?.();
          return;
        }
      } while (rebuildAgain && !stopped);
    })().finally(() => {
      building = null;
    });
    return building;
  }

  /** Applies the runs finished since the index's cursor: a delta at once, or a rebuild. */
  async function sync(): Promise<void> {
    for (;;) {
      const current = loaded;
      if (current === null || stopped) return;
      if (holding) {
        if (!building && Date.now() - lastFailureAt > retryAfterMs) void startBuild();
        return;
      }
      const step = await nextFollowStep(db, current.cursor, { maxDelta });
      if (loaded !== current) continue;
      if (step.kind === 'current') return;
      if (step.kind === 'rebuild') {
        holding = true;
        logger.info(
          { changed: step.changed, reason: step.reason, data_as_of: current.cursor.dataAsOf },
          'search index: runs too large for a delta; rebuilding, answering as of before them',
        );
        void startBuild();
        return;
      }
      const { next, rows } = await applyChanges(current, step, true);
      // A rebuild swapped in meanwhile has its own cursor: follow from there.
      if (loaded !== current) continue;
      swapIn(next, { runIds: step.runIds, rows });
      if (next.index.deltaSize > maxDelta && !building) void startBuild();
      return;
    }
  }

  // Every search syncs with a query that started after the search arrived, so a run that
  // finished before it is seen; concurrent searches share one such query.
  let syncing: { startedAt: number; promise: Promise<void> } | null = null;
  let queued: Promise<void> | null = null;
  let clock = 0;

  function syncFor(arrivedAt: number): Promise<void> {
    if (syncing && syncing.startedAt >= arrivedAt) return syncing.promise;
    if (syncing) {
      queued ??= syncing.promise
        .catch(() => {})
        .then(() => {
          queued = null;
          return syncFor(arrivedAt);
        });
      return queued;
    }
    const startedAt = ++clock;
    const promise = sync().finally(() => {
      if (syncing?.promise === promise) syncing = null;
    });
    syncing = { startedAt, promise };
    return promise;
  }

  function follow(): void {
    if (followEveryMs <= 0 || followTimer || stopped) return;
    followTimer = setInterval(() => {
      if (loaded === null || syncing || prefetching) return;
      syncFor(clock + 1)
        .then(readAhead)
        .catch((e: unknown) => logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'search index: following the runs failed'));
    }, followEveryMs);
    followTimer.unref?.();
  }

  return {
    async search(filters, offset, limit) {
      const arrivedAt = clock + 1;
      if (loaded === null) {
        if (mode === 'memory' && !building && Date.now() - lastFailureAt > retryAfterMs) void startBuild();
        // Read first: the answer reflects at least that day.
        const dataAsOf = await readDataAsOf(db);
        return { ...(await searchCompaniesSql(db, filters, offset, limit)), engine: 'sql' as const, dataAsOf };
      }
      await syncFor(arrivedAt);
      // One object: the index and the day it reflects are never from two different states.
      const current = loaded;
      const answer = answerOf(current.index, filters, offset, limit);
      return { total: answer.total, ids: [...answer.ids], engine: 'memory' as const, dataAsOf: current.cursor.dataAsOf };
    },
    answerUnchecked(filters, offset, limit) {
      const current = loaded;
      if (current === null) return null;
      const answer = answerOf(current.index, filters, offset, limit);
      return {
        answer: { total: answer.total, ids: [...answer.ids], engine: 'memory' as const, dataAsOf: current.cursor.dataAsOf },
        asked: runsAskedOf(current.cursor),
        index: current.index,
        cursor: current.cursor,
        filters,
        offset,
        limit,
      };
    },
    async confirm(unchecked, runs) {
      if (planFollowStep(unchecked.cursor, runsOf(unchecked.cursor, runs), { maxDelta }).kind === 'current') return null;
      // Something moved since the answer's cursor: follow with a query that starts now (after the
      // statement that saw it), as search() would have before answering.
      await syncFor(clock + 1);
      const current = loaded;
      if (current === null || (current.index === unchecked.index && current.cursor.dataAsOf === unchecked.answer.dataAsOf)) return null;
      const answer = answerOf(current.index, unchecked.filters, unchecked.offset, unchecked.limit);
      return { total: answer.total, ids: [...answer.ids], engine: 'memory' as const, dataAsOf: current.cursor.dataAsOf };
    },
    start() {
      if (mode !== 'memory') return;
      if (loaded === null) void startBuild();
      follow();
    },
    async refresh() {
      if (mode === 'sql') return;
      if (loaded === null) await startBuild();
      for (;;) {
        if (loaded === null) return;
        await syncFor(clock + 1);
        if (!building) return;
        await building;
      }
    },
    status() {
      return {
        engine: loaded ? 'memory' : 'sql',
        companies: loaded?.index.size ?? null,
        bytes: loaded?.index.byteSize ?? null,
        buildMs: loaded?.buildMs ?? null,
        buildReadMs: loaded?.readMs ?? null,
        builtAt: loaded?.builtAt ?? null,
        rebuilding: building !== null,
        delta: loaded?.index.deltaSize ?? null,
        dataAsOf: loaded?.cursor.dataAsOf ?? null,
        readAhead: [...prefetched.values()].reduce((n, p) => n + p.rows.size, 0),
      };
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (followTimer) clearInterval(followTimer);
      await buildWorker?.abort();
      await building?.catch(() => {});
    },
  };
}
