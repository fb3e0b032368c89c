import type { Log } from '../../logger.ts';
import type { Identifier } from '../../registry/model.ts';
import type { RegistryExecutor } from '../../registry/store.ts';
import { findRunChanges, importedIdentifierOf, readRunWatermark } from '../companies/repo.ts';
import type { MatchIndex } from './match-index.ts';
import { MatchIndexBuilder } from './match-index-builder.ts';
import { readMatchRows, readMatchRowsByIdentifiers } from './repo.ts';

/**
 * Keeps the match index of this process in step with the registry, as the search engine does
 * its own (src/modules/companies/search-engine.ts): companies change only through runs, and every
 * run leaves a row in daily_runs. Before each batch the runs since the build are read (one small
 * query): an on-demand import (kind 'import', its identifier in columns) is read and applied as a
 * delta at once; any other finished run starts a rebuild in the background, and batches see the
 * registry as it was (plus imports) until it is swapped in.
 *
 * Until the first build is done there is no index: `current` waits a little for it, then answers
 * null and the service answers 503 (docs/match.md, "Index").
 */

const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

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
  nextRunId: number;
  /** Unfinished runs and failed ones that may be resumed, with the state last seen. */
  watch: Map<number, string>;
  buildMs: number;
}

export function createMatchEngine(options: {
  db: RegistryExecutor;
  logger: Log;
  chunkSize?: number;
  maxDelta?: number;
  retryAfterMs?: number;
}): MatchEngine {
  const { db, logger } = options;
  // A chunk's rows are parsed and tokenised without a pause: small chunks keep requests flowing.
  const chunkSize = options.chunkSize ?? 5_000;
  const maxDelta = options.maxDelta ?? 2_000;
  const retryAfterMs = options.retryAfterMs ?? 30_000;
  let loaded: Loaded | null = null;
  let building: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let syncing: Promise<void> | null = null;

  async function build(): Promise<Loaded> {
    const started = Date.now();
    // One snapshot: the rows and the run watermark describe the same state.
    return db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const { nextId, unfinished } = await readRunWatermark(trx);
        const builder = new MatchIndexBuilder();
        await readMatchRows(trx, chunkSize, async (rows) => {
          if (stopped) throw new Error('match engine stopped');
          for (const row of rows) builder.add(row);
          await yieldToRequests();
        });
        const index = await builder.build(yieldToRequests);
        const watch = new Map(unfinished.map((r) => [r.id, r.status === 'running' ? 'running' : `${r.status}:${r.attempts}`] as const));
        return { index, nextRunId: nextId, watch, buildMs: Date.now() - started };
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
    const runs = await findRunChanges(db, current.nextRunId, [...current.watch.keys()]);
    const imported: Identifier[] = [];
    let rebuild = false;
    for (const run of runs) {
      current.nextRunId = Math.max(current.nextRunId, run.id + 1);
      if (run.status === 'running') {
        current.watch.set(run.id, 'running');
        continue;
      }
      const state = `${run.status}:${run.attempts}`;
      if (current.watch.get(run.id) === state) continue;
      if (run.status === 'failed') current.watch.set(run.id, state);
      else current.watch.delete(run.id);
      const identifier = importedIdentifierOf(run);
      if (identifier) imported.push(identifier);
      else rebuild = true;
    }
    if (imported.length > 0) {
      for (const row of await readMatchRowsByIdentifiers(db, imported)) current.index.upsert(row);
      if (current.index.deltaSize > maxDelta) rebuild = true;
    }
    if (rebuild) void startBuild();
  }

  /** Concurrent batches share one sync; a batch that arrives during one waits for the next. */
  async function syncNow(current: Loaded): Promise<void> {
    while (syncing) await syncing.catch(() => {});
    syncing = sync(current).finally(() => {
      syncing = null;
    });
    return syncing;
  }

  return {
    start() {
      if (loaded === null) void startBuild();
    },
    async current(waitMs) {
      if (loaded === null) {
        const pending = building ?? startBuild();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          pending,
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, waitMs);
          }),
        ]);
        clearTimeout(timer);
      }
      const current = loaded;
      if (current === null) return null;
      await syncNow(current);
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
      await building?.catch(() => {});
    },
  };
}
