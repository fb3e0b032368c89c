import { connectionOf } from '../../db/database.ts';
import { startInExportedSnapshot } from '../../db/snapshot-worker.ts';
import type { Log } from '../../logger.ts';
import type { RegistryExecutor } from '../../registry/store.ts';
import { nextFollowStep, readIndexCursor, type IndexCursor } from '../companies/index-follower.ts';
import { readRunChangedCompanyIds } from '../companies/repo.ts';
import type { MatchIndex } from './match-index.ts';
import { MatchIndexBuilder } from './match-index-builder.ts';
import { startMatchWorkerBuild, type MatchWorkerBuild } from './match-index-worker.ts';
import { readMatchRows, readMatchRowsByIds } from './repo.ts';
import { yieldToEventLoop } from '../../lib/event-loop.ts';

/**
 * Keeps the match index of this process in step with the registry, following the runs as the
 * search engine does (src/modules/companies/index-follower.ts): before each batch one small query
 * on daily_runs says which runs finished since the index's cursor. Runs that changed up to
 * `maxDelta` companies in all (on-demand imports, small daily runs) are read again and applied as
 * a delta at once, in one synchronous step (a batch sees all of them or none); more than that,
 * or a delta grown past `maxDelta`, starts a rebuild in the background, and batches see the
 * registry as the index holds it until the rebuild is swapped in.
 *
 * Until the first build is done there is no index: `current` waits a little for it, then answers
 * null and the service answers 503 (docs/match.md, "Index").
 */

export interface MatchEngineStatus {
  ready: boolean;
  companies: number | null;
  bytes: number | null;
  buildMs: number | null;
  rebuilding: boolean;
}

export interface MatchEngine {
  /** Starts the first build in the background. */
  start(): void;
  /** The index brought up to date with the runs since it was built; null while there is none after waiting up to `waitMs`. */
  current(waitMs: number): Promise<MatchIndex | null>;
  /** Brings the index up to date now, waiting for any rebuild it needs (tests, benchmarks). */
  refresh(): Promise<void>;
  status(): MatchEngineStatus;
  stop(): Promise<void>;
}

interface Loaded {
  index: MatchIndex;
  /** The runs the index reflects (index-follower.ts); moved on by each delta applied. */
  cursor: IndexCursor;
  buildMs: number;
}

export function createMatchEngine(options: {
  db: RegistryExecutor;
  logger: Log;
  chunkSize?: number;
  maxDelta?: number;
  retryAfterMs?: number;
  /** Where a full build runs: a worker thread (default; match-index-worker.ts) or this thread, between pauses. */
  buildIn?: 'worker' | 'thread';
}): MatchEngine {
  const { db, logger } = options;
  // In this thread, a chunk's rows are parsed and tokenised without a pause: small chunks keep requests flowing.
  const chunkSize = options.chunkSize ?? 5_000;
  // The worker opens its own connection with the serving database's connection string; a database
  // not made by createDatabase (none in this service) builds in this thread instead.
  const connection = (options.buildIn ?? 'worker') === 'worker' ? connectionOf(db) : undefined;
  /** The worker of the build in progress (stop() ends it). */
  let buildWorker: MatchWorkerBuild | null = null;
  const maxDelta = options.maxDelta ?? 2_000;
  const retryAfterMs = options.retryAfterMs ?? 30_000;
  let loaded: Loaded | null = null;
  let building: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let syncing: Promise<void> | null = null;

  /**
   * A build in a worker thread (match-index-worker.ts): this thread reads only the cursor, in a
   * repeatable-read transaction whose snapshot the worker imports, so the index and its cursor
   * describe the same state; nothing of the rows crosses this thread.
   */
  async function buildInWorker(started: number): Promise<Loaded> {
    try {
      const { cursor, build } = await startInExportedSnapshot(db, readIndexCursor, (snapshot) => {
        if (stopped) throw new Error('match engine stopped');
        return (buildWorker = startMatchWorkerBuild(yieldToEventLoop, { connection: connection!, snapshot, chunkSize }));
      });
      return { index: await build.finish(), cursor, buildMs: Date.now() - started };
    } finally {
      buildWorker = null;
    }
  }

  async function build(): Promise<Loaded> {
    const started = Date.now();
    if (connection !== undefined) return buildInWorker(started);
    // One snapshot: the rows and the run watermark describe the same state.
    return db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const cursor = await readIndexCursor(trx);
        const builder = new MatchIndexBuilder();
        await readMatchRows(trx, chunkSize, async (rows) => {
          if (stopped) throw new Error('match engine stopped');
          for (const row of rows) builder.add(row);
          await yieldToEventLoop();
        });
        const index = await builder.build(yieldToEventLoop);
        return { index, cursor, buildMs: Date.now() - started };
      });
  }

  function startBuild(): Promise<void> {
    if (stopped) return Promise.resolve();
    if (building) {
      again = true;
      return building;
    }
    building = (async () => {
      do {
        again = false;
        try {
          loaded = await build();
          logger.info(
            { companies: loaded.index.size, ms: loaded.buildMs, mb: Math.round(loaded.index.byteSize / 1e6) },
            'match index built',
          );
        } catch (e) {
          if (stopped) return;
          logger.error({ err: e instanceof Error ? e.message : String(e) }, 'match index build failed; retrying later');
          retryTimer ??= setTimeout(() => {
            retryTimer = null;
            void startBuild();
          }, retryAfterMs);
          retryTimer.unref?.();
          return;
        }
      } while (again && !stopped);
    })().finally(() => {
      building = null;
    });
    return building;
  }

  async function sync(current: Loaded): Promise<void> {
    const step = await nextFollowStep(db, current.cursor, { maxDelta });
    if (step.kind === 'current') return;
    if (step.kind === 'rebuild') {
      // The index stays as it is (its cursor too) until the rebuild is swapped in.
      if (!building) void startBuild();
      return;
    }
    const ids = await readRunChangedCompanyIds(db, step.runIds);
    const rows = await readMatchRowsByIds(db, ids);
    // A rebuild swapped in meanwhile follows from its own cursor.
    if (loaded !== current) return;
    for (const row of rows) current.index.upsert(row);
    // A changed company no longer stored is gone from a rebuild too.
    const found = new Set(rows.map((r) => r.id));
    for (const id of ids) if (!found.has(Number(id))) current.index.remove(Number(id));
    current.cursor = step.next;
    if (current.index.deltaSize > maxDelta && !building) void startBuild();
  }

  /** Concurrent batches share one sync; a batch that arrives during one waits for the next. */
  async function syncNow(current: Loaded): Promise<void> {
    while (syncing) await syncing.catch(() => {});
    syncing = sync(current).finally(() => {
      syncing = null;
    });
    return syncing;
  }

  async function waitFor(pending: Promise<void>, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      pending.catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      }),
    ]);
    clearTimeout(timer);
  }

  return {
    start() {
      if (loaded === null) void startBuild();
    },
    async current(waitMs) {
      if (loaded === null) await waitFor(building ?? startBuild(), waitMs);
      const current = loaded;
      if (current === null) return null;
      await syncNow(current);
      // An index of no company while a rebuild runs (built before the registry's first load, as on
      // a fresh start then a seed) would answer every query with nothing: such a batch waits for
      // the rebuild as for a first build, and is answered 503 (not charged) if it is not done.
      if (loaded!.index.companies === 0 && building !== null) {
        await waitFor(building, waitMs);
        if (loaded!.index.companies === 0 && building !== null) return null;
        await syncNow(loaded!);
      }
      return loaded!.index;
    },
    async refresh() {
      if (loaded === null) await startBuild();
      for (;;) {
        if (loaded === null) return;
        await syncNow(loaded);
        if (!building) return;
        await building;
      }
    },
    status() {
      return {
        ready: loaded !== null,
        companies: loaded?.index.companies ?? null,
        bytes: loaded?.index.byteSize ?? null,
        buildMs: loaded?.buildMs ?? null,
        rebuilding: building !== null,
      };
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      await buildWorker?.abort();
      await building?.catch(() => {});
    },
  };
}
