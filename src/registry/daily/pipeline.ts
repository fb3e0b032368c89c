import { sql } from 'kysely';
import type { PreparedItem } from '../prepare.ts';
import { prepareFileInWorker } from '../prepare-worker.ts';
import { deferSecondaryIndexes, restoreDeferredIndexes } from '../deferred-indexes.ts';
import { fileSourceOrigin, readSnapshotFile, type FileSourceOptions } from '../sources/file.ts';
import type { RegistryExecutor } from '../store/executor.ts';
import { hasAnyCompany, type MatchedCompany } from '../store/companies-repo.ts';
import type { DailyRun, RunCounters } from '../store/daily-runs-repo.ts';
import type { RunDailyOptions } from './options.ts';
import { createSkips } from './skips.ts';
import { createBatchReader, preparedInProcess } from './reader.ts';
import { createRecentLines, lookupBatch, MAX_ATTEMPTS, NOT_NEW_TOLERANCE, planBatch } from './planner.ts';
import { writeBatch, type BatchOutcome } from './writer.ts';
import { fileSize, looksLikeFullExport, WORKER_MIN_FILE_BYTES } from './full-export-heuristics.ts';

/**
 * A run's batches from its source to the database: read, looked up, planned and written, the
 * stages overlapping (processBatches); and the deferral of secondary indexes on a first load.
 */

export async function processStream(db: RegistryExecutor, run: DailyRun, options: RunDailyOptions, now: () => number): Promise<void> {
  // Indexes an earlier run dropped and could not build again (its process died) are built first.
  await restoreDeferredIndexes(db, run.id);
  let deferred = false;
  try {
    await processBatches(db, run, options, now, async (firstLoad) => {
      if (!firstLoad) return;
      // Only an optimisation: if the indexes cannot be dropped (say, the role does not own the
      // tables), the load goes on with them in place. The transaction dropped nothing then.
      deferred =
        (
          await deferSecondaryIndexes(db, run.id).catch((e: unknown) => {
            options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'indexes not deferred: the load keeps them in place');
            return [];
          })
        ).length > 0;
    });
  } finally {
    // Completed or failed, the run leaves the indexes as it found them. Should building them
    // fail, the run still ends as it would have; the next run (or process start) builds them.
    const built = timelineOf(options);
    if (deferred) {
      await restoreDeferredIndexes(db, run.id, (name, ms) => built({ index: name, ms }, 'deferred index built')).catch((e: unknown) => {
        options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'deferred indexes not built yet');
      });
      await markIdentifiersVisible(db, built, options);
    }
  }
}

/**
 * After a first load, a VACUUM of company_identifiers marks its pages all-visible, so that every
 * lookup by identifier is an index-only scan of the key (migration 20261130000100): autovacuum
 * marks an insert-only table's pages only once a fifth more rows have arrived since its last pass,
 * which leaves the tail of a load unmarked for months of daily runs, and a probe of an unmarked
 * page reads the table's page too. It reads only the pages not yet marked, and blocks neither
 * reads nor writes. Only an optimisation: a failure is logged and the run ends as it would have.
 */
async function markIdentifiersVisible(db: RegistryExecutor, built: (fields: object, msg: string) => void, options: RunDailyOptions) {
  if (db.isTransaction) return; // VACUUM cannot run in a transaction block
  const started = performance.now();
  try {
    await sql`VACUUM company_identifiers`.execute(db);
    built({ ms: Math.round(performance.now() - started) }, 'identifiers vacuumed');
  } catch (e) {
    options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'identifiers not vacuumed');
  }
}

/** Where the run's timeline goes: the logger's info, except for an on-demand import (one company, per request). */
function timelineOf(options: RunDailyOptions): (fields: object, msg: string) => void {
  const logger = options.logger;
  if (options.importIdentifier !== undefined || logger?.info === undefined) return () => {};
  return (fields, msg) => logger.info!(fields, msg);
}

/** `onStart(firstLoad)`: called once the run knows whether it is a first load that defers its indexes. */
async function processBatches(
  db: RegistryExecutor,
  run: DailyRun,
  options: RunDailyOptions,
  now: () => number,
  onStart: (firstLoad: boolean) => Promise<void>,
): Promise<void> {
  const { date, source } = options;
  const batchSize = options.batchSize ?? 2000;
  const skips = createSkips(options.logger);
  const origin = fileSourceOrigin(source);
  let assumeNew = !(await hasAnyCompany(db));
  let notNewLines = 0;
  let linesWritten = 0;
  const size = origin === null ? 0 : fileSize(origin.path);
  // A large file is read and prepared in the worker thread (docs/benchmarks.md): a first load, a
  // full export and a delta of changed companies alike, since this thread parses each changed
  // snapshot's JSON again to merge it either way. The worker also derives each line's row
  // (search columns) unless the file is a full export, most of whose lines are unchanged: on a
  // delta, a changed company whose merge is the incoming snapshot takes that row as it is.
  const inWorker = origin !== null && (options.prepareInWorker ?? size >= WORKER_MIN_FILE_BYTES);
  const withRows = inWorker && (assumeNew || !(await looksLikeFullExport(db, origin.path, size)));
  // A line of a file that cannot be used at all (not JSON, no valid identifier) is skipped by the
  // source; it is counted here with the run's other skipped snapshots (`skipped_count`).
  let unreadableLines = 0;
  const fileOptions: FileSourceOptions | null =
    origin === null
      ? null
      : {
          ...origin.options,
          onError: (line, message) => {
            unreadableLines++;
            origin.options.onError?.(line, message);
          },
        };
  const chunks = inWorker
    ? prepareFileInWorker(origin.path, date, fileOptions!, withRows)
    : // A file source's snapshots are freshly parsed and held by nothing else; other sources may keep theirs.
      preparedInProcess(
        origin !== null
          ? readSnapshotFile(origin.path, fileOptions!, options.signal)
          : source.snapshotsForDate(date, { signal: options.signal }),
        origin !== null,
        () => assumeNew,
      );
  // A first load writes its new companies with binary COPY (writer.ts); a run on a registry that
  // already holds companies inserts its few new ones as before.
  const copyRows = assumeNew && (options.copyRows ?? true);
  try {
    await onStart(assumeNew && (options.deferIndexes ?? inWorker));
  } catch (e) {
    await chunks.close().catch(() => {});
    throw e;
  }
  const reader = createBatchReader(chunks, batchSize, skips, options.signal, () => {
    const n = unreadableLines;
    unreadableLines = 0;
    return n;
  });
  const recent = createRecentLines();
  const started = now();
  const timeline = timelineOf(options);
  timeline({ first_load: assumeNew, in_worker: inWorker, batch_size: batchSize }, 'run started');
  let batchesRetired = 0;
  const totals = { processed: 0, new: 0, updated: 0, deleted: 0, events: 0 };
  const expectedTotal = options.expectedTotal ?? null;

  const report = (c: RunCounters) => {
    totals.processed += c.processed + c.skipped;
    totals.new += c.new;
    totals.updated += c.updated;
    totals.deleted += c.deleted;
    totals.events += c.events;
    if (!options.onProgress) return;
    const elapsedMs = Math.max(1, now() - started);
    const rate = (totals.processed * 1000) / elapsedMs;
    const etaMs = expectedTotal !== null && rate > 0 ? Math.max(0, ((expectedTotal - totals.processed) / rate) * 1000) : null;
    options.onProgress({ ...totals, elapsedMs, rate, expectedTotal, etaMs });
  };

  const retire = (outcome: BatchOutcome) => {
    notNewLines += outcome.notNew;
    linesWritten += outcome.counters.processed + outcome.deferred.length;
    if (notNewLines > Math.max(1, linesWritten / NOT_NEW_TOLERANCE)) assumeNew = false;
    const retry: PreparedItem[] = [];
    for (const item of outcome.deferred) {
      if (++item.attempts < MAX_ATTEMPTS) retry.push(item);
      else {
        outcome.counters.skipped++;
        options.logger?.warn({ identifiers: item.identifiers }, 'snapshot skipped: its company kept changing under the run');
      }
    }
    reader.requeue(retry);
    report(outcome.counters);
    if (++batchesRetired === 1) timeline({ ms: now() - started, companies: totals.processed }, 'first batch committed');
  };

  // Three stages overlap: while one batch's transaction runs in PostgreSQL, the next batch's
  // lookup runs there too, and this thread plans (merges, diffs) the batch before it. The next
  // batch is read and its lookup sent before the current one is planned: reading is work on this
  // thread like planning, so only the order decides whether a lookup is waited for. Revision
  // checks make the overlap safe: a lookup taken before the batch in flight committed sees an
  // older revision of a company that batch changes; its update then fails the check and is
  // retried from the fresh state (and a company it created is retried after losing its
  // identifiers' unique check).
  // A read that fails (the source broke) is reported after the batch read before it is written:
  // what was read before the failure still commits, as it did without the read-ahead.
  const readAhead = async () => {
    try {
      const { items, skipped } = await reader.next();
      const matches = lookupBatch(db, source.name, items, assumeNew);
      // Awaited in turn; this keeps a failure from surfacing as unhandled if the run stops first.
      matches.catch(() => {});
      return { items, skipped, matches, failure: null as { error: unknown } | null };
    } catch (error) {
      return { items: [] as PreparedItem[], skipped: 0, matches: Promise.resolve([] as (MatchedCompany | null)[]), failure: { error } };
    }
  };
  let inFlight: Promise<BatchOutcome> | null = null;
  let pendingLookup: Promise<unknown> | null = null;
  const settleInFlight = async () => {
    if (inFlight === null) return;
    const outcome = await inFlight;
    inFlight = null;
    retire(outcome);
  };
  try {
    let next = await readAhead();
    pendingLookup = next.matches;
    for (;;) {
      const { items, skipped, matches, failure } = next;
      if (failure !== null) {
        await settleInFlight();
        throw failure.error;
      }
      if (items.length === 0 && skipped === 0) {
        if (inFlight === null) {
          timeline({ ms: now() - started, companies: totals.processed, batches: batchesRetired }, 'last batch committed');
          break;
        }
        await settleInFlight();
        // The retries it deferred are read again.
        next = await readAhead();
        pendingLookup = next.matches;
        continue;
      }
      next = await readAhead();
      pendingLookup = next.matches;
      const plan = await planBatch(db, date, items, await matches, skipped, skips, recent);
      recent.remember(plan.seen);
      await settleInFlight();
      inFlight = writeBatch(db, run.id, source.name, date, plan, items.length, copyRows);
      // Keep a rejected in-flight write from surfacing as unhandled while the next batch is planned.
      inFlight.catch(() => {});
    }
  } catch (e) {
    // Let the batch in flight finish (or fail) before the run is marked failed.
    if (inFlight !== null) await inFlight.catch(() => {});
    await pendingLookup?.catch(() => {});
    await reader.close().catch(() => {});
    throw e;
  }
}
