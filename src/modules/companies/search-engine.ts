import type { Identifier } from '../../registry/model.ts';
import type { Log } from '../../logger.ts';
import type { RegistryExecutor } from '../../registry/store.ts';
import type { SearchFilters } from './filters.ts';
import {
  findRunChanges, importedIdentifierOf, readIndexRowsByIdentifiers, readIndexRowsInOrder, readRunWatermark, searchCompaniesSql,
} from './repo.ts';
import type { SearchIndex } from './search-index.ts';
import { SearchIndexBuilder } from './search-index-builder.ts';
import type { IndexAnswer } from './search-index-rows.ts';

/**
 * Keeps the in-memory search index of this process in step with the database, and answers
 * searches from it, or from SQL while there is none yet.
 *
 * Companies change only through daily runs (src/registry/daily/), and every run leaves a row in
 * daily_runs, so that table says when the index is out of date. Before each search the runs
 * since the index was built are read (one small query):
 * - an on-demand import (a run of kind 'import') changes one company: its row is read and put in
 *   the index's delta at once, so an imported company is searchable from the next request on;
 * - any other run that has finished (completed, or failed after committing some batches) starts
 *   a rebuild in the background; until it is swapped in, searches see the registry as it was
 *   before that run (plus imports). A run still in progress is waited for.
 */

/** A build runs in the serving process: between slices of a few milliseconds, requests get their turn. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface SearchEngineStatus {
  engine: 'memory' | 'sql';
  /** Companies in the index; null while there is none. */
  companies: number | null;
  /** Bytes of the index's arrays. */
  bytes: number | null;
  buildMs: number | null;
  builtAt: Date | null;
  rebuilding: boolean;
}

export interface CompanySearchEngine {
  search(filters: SearchFilters, offset: number, limit: number): Promise<IndexAnswer & { engine: 'memory' | 'sql' }>;
  /** Starts the first build in the background (the API answers from SQL meanwhile). */
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
  /** Rows read per query while building. */
  chunkSize?: number;
  /** A delta larger than this asks for a rebuild instead. */
  maxDelta?: number;
  retryAfterMs?: number;
}

interface Loaded {
  index: SearchIndex;
  /** Runs with an id from here on were not seen when the index was built or last synced. */
  nextRunId: number;
  /** Runs to look at again: unfinished ones ('running') and failed ones (`failed:<attempts>`) that may be resumed. */
  watch: Map<number, string>;
  builtAt: Date;
  buildMs: number;
}

export function createCompanySearchEngine(options: SearchEngineOptions): CompanySearchEngine {
  const { db, logger } = options;
  const mode = options.mode ?? 'memory';
  const chunkSize = options.chunkSize ?? 10_000;
  const maxDelta = options.maxDelta ?? 50_000;
  const retryAfterMs = options.retryAfterMs ?? 30_000;

  let loaded: Loaded | null = null;
  let building: Promise<void> | null = null;
  let rebuildAgain = false;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let lastFailureAt = 0;

  async function build(): Promise<Loaded> {
    const started = Date.now();
    // One snapshot for the whole read: the index and the run watermark describe the same state.
    return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(async (trx) => {
      const { nextId, unfinished } = await readRunWatermark(trx);
      const builder = new SearchIndexBuilder();
      await readIndexRowsInOrder(trx, chunkSize, async (rows) => {
        if (stopped) throw new Error('search engine stopped');
        for (const row of rows) builder.add(row);
        await yieldToRequests();
      });
      const index = await builder.build(yieldToRequests);
      const watch = new Map<number, string>();
      for (const r of unfinished) watch.set(r.id, r.status === 'running' ? 'running' : `${r.status}:${r.attempts}`);
      return { index, nextRunId: nextId, watch, builtAt: new Date(), buildMs: Date.now() - started };
    });
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
          const next = await build();
          loaded = next;
          logger.info({ companies: next.index.size, ms: next.buildMs, mb: Math.round(next.index.byteSize / 1e6) }, 'search index built');
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

  /** Applies what happened since the index was built: imports now, other runs by a rebuild. */
  async function sync(): Promise<void> {
    const current = loaded;
    if (current === null) return;
    const runs = await findRunChanges(db, current.nextRunId, [...current.watch.keys()]);
    const imported: Identifier[] = [];
    let rebuild = false;
    for (const run of runs) {
      current.nextRunId = Math.max(current.nextRunId, run.id + 1);
      if (run.status === 'running') {
        current.watch.set(run.id, 'running');
        continue;
      }
      const key = `${run.status}:${run.attempts}`;
      if (current.watch.get(run.id) === key) continue;
      if (run.status === 'failed') current.watch.set(run.id, key);
      else current.watch.delete(run.id);
      const identifier = importedIdentifierOf(run);
      if (identifier) imported.push(identifier);
      else rebuild = true;
    }
    if (imported.length > 0) {
      const rows = await readIndexRowsByIdentifiers(db, imported);
      for (const row of rows) current.index.upsert(row);
      if (current.index.deltaSize > maxDelta) rebuild = true;
    }
    if (rebuild) void startBuild();
  }

  // Every search syncs with a query that started after the search arrived, so an import that
  // committed before it is seen; concurrent searches share one such query.
  let syncing: { startedAt: number; promise: Promise<void> } | null = null;
  let queued: Promise<void> | null = null;
  let clock = 0;

  function syncFor(arrivedAt: number): Promise<void> {
    if (syncing && syncing.startedAt >= arrivedAt) return syncing.promise;
    if (syncing) {
      queued ??= syncing.promise.catch(() => {}).then(() => {
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

  return {
    async search(filters, offset, limit) {
      const arrivedAt = clock + 1;
      const current = loaded;
      if (current === null) {
        if (mode === 'memory' && !building && Date.now() - lastFailureAt > retryAfterMs) void startBuild();
        return { ...(await searchCompaniesSql(db, filters, offset, limit)), engine: 'sql' as const };
      }
      await syncFor(arrivedAt);
      return { ...loaded!.index.query(filters, offset, limit), engine: 'memory' as const };
    },
    start() {
      if (mode === 'memory' && loaded === null) void startBuild();
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
        builtAt: loaded?.builtAt ?? null,
        rebuilding: building !== null,
      };
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      await building?.catch(() => {});
    },
  };
}
