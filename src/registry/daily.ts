import { sql } from 'kysely';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { CompanySnapshot, CompanyStatus, DetectedEvent } from './model.ts';
import type { RegistrySource } from './sources/source.ts';
import { diffSnapshots } from './diff.ts';
import { mergeIsIncoming, mergeSnapshots } from './merge.ts';
import { isSkip, jsonOf, prepareEntry, type PreparedEntry, type PreparedItem } from './prepare.ts';
import { prepareFileInWorker, type PreparedChunks } from './prepare-worker.ts';
import { deferSecondaryIndexes, restoreDeferredIndexes } from './deferred-indexes.ts';
import { fileSourceOrigin } from './sources/file.ts';
import {
  addRunCounters, allocateCompanyIds, beginRun, companyRowFields, completeRun, contentHash, deleteCompanies, deriveCompanyColumns,
  ensureEventsPartition, failRun, hasAnyCompany, insertCompanies, insertEvents, insertIdentifiers, lockEventsWriter,
  lookupCompaniesForBatch, registrySize, tryLockRun, unlockRun, updateCompanies, updateFingerprints,
  type CompanyColumns, type CompanyRowData, type CompanyUpdateRow, type DailyRun, type IdentifierRow, type MatchedCompany, type NewCompanyRow,
  type NewEventRow, type RegistryExecutor, type RunCounters,
} from './store.ts';

/**
 * The daily run: a source's snapshots for one date, in batches. Per batch, one query loads the
 * stored companies, merge and diff run in memory, and one short transaction writes companies,
 * identifiers, events and the run's counters together. docs/registry.md explains why this is
 * idempotent (a completed run is never applied twice; a replayed snapshot is a no-op) and
 * resumable (every committed batch is complete, counters included).
 */

export interface DailyProgress {
  processed: number;
  new: number;
  updated: number;
  deleted: number;
  events: number;
  elapsedMs: number;
  /** Companies a second since this attempt started. */
  rate: number;
  /** When the source's size is known. */
  expectedTotal: number | null;
  etaMs: number | null;
}

export { prepareSnapshot } from './prepare.ts';

export interface RunDailyOptions {
  date: string;
  source: RegistrySource;
  /**
   * Read and prepare a `file:` source in a worker thread (see prepare-worker.ts). Default: when
   * the file is at least WORKER_MIN_FILE_BYTES (below which starting the worker costs more than
   * it saves) and either the registry is still empty (a first load) or the file is a full export
   * (looksLikeFullExport: mostly unchanged lines). A delta file of changed companies is faster on
   * this thread, which would otherwise parse each changed line's JSON a second time to merge it.
   */
  prepareInWorker?: boolean;
  /**
   * Build the secondary indexes once at the end instead of during the run (deferred-indexes.ts).
   * Only ever done for a run that starts on an empty registry. Default: when the run prepares in
   * the worker, i.e. a first load of a large file.
   */
  deferIndexes?: boolean;
  /** What identifies the input, so the same date can be run from another file. Default: the source's name. */
  sourceKey?: string;
  batchSize?: number;
  expectedTotal?: number | null;
  onProgress?: (p: DailyProgress) => void;
  signal?: AbortSignal;
  logger?: { warn(obj: object, msg: string): void };
  now?: () => number;
}

export interface DailyRunSummary {
  runId: string;
  date: string;
  source: string;
  sourceKey: string;
  /** The run had completed before: nothing was read or written. */
  alreadyCompleted: boolean;
  /** This attempt continued an interrupted run. */
  resumed: boolean;
  new: number;
  updated: number;
  deleted: number;
  events: number;
  processed: number;
  skipped: number;
  total: number;
  durationMs: number;
}

export class RunInProgressError extends Error {
  constructor(date: string, sourceKey: string) {
    super(`A daily run for ${date} from ${sourceKey} is already in progress in another process.`);
    this.name = 'RunInProgressError';
  }
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written YYYY-MM-DD. */
export function isIsoDate(s: string): boolean {
  const m = ISO_DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

export function formatSummary(s: DailyRunSummary): string {
  const note = s.alreadyCompleted ? ' (already completed: nothing added)' : s.resumed ? ' (resumed)' : '';
  return `daily ${s.date} ${s.sourceKey}: new=${s.new} updated=${s.updated} deleted=${s.deleted} events=${s.events} total=${s.total} skipped=${s.skipped}${note}`;
}

export async function runDaily(db: RegistryExecutor, options: RunDailyOptions): Promise<DailyRunSummary> {
  const { date, source } = options;
  if (!isIsoDate(date)) throw new RangeError(`Not a date (YYYY-MM-DD): ${date}`);
  const sourceKey = options.sourceKey ?? source.name;
  const now = options.now ?? Date.now;
  const started = now();
  await ensureEventsPartition(db, date);

  // The session lock lives on one connection for the whole run, so it is released if the process dies.
  return db.connection().execute(async (conn) => {
    if (!(await tryLockRun(conn, date, sourceKey))) throw new RunInProgressError(date, sourceKey);
    try {
      const { run, resumed } = await beginRun(conn, date, source.name, sourceKey);
      if (run.status === 'completed') return summarize(run, { alreadyCompleted: true, resumed: false, durationMs: now() - started });
      try {
        await processStream(db, run, options, now);
      } catch (e) {
        await failRun(db, run.id, e instanceof Error ? e.message : String(e)).catch(() => {});
        throw e;
      }
      const done = await completeRun(db, run.id);
      return summarize(done, { alreadyCompleted: false, resumed, durationMs: now() - started });
    } finally {
      await unlockRun(conn, date, sourceKey).catch(() => {});
    }
  });
}

function summarize(run: DailyRun, extra: { alreadyCompleted: boolean; resumed: boolean; durationMs: number }): DailyRunSummary {
  return {
    runId: run.id,
    date: run.run_date,
    source: run.source,
    sourceKey: run.source_key,
    alreadyCompleted: extra.alreadyCompleted,
    resumed: extra.resumed,
    new: run.new_count,
    updated: run.updated_count,
    deleted: run.deleted_count,
    events: run.events_count,
    processed: run.processed_count,
    skipped: run.skipped_count,
    total: run.total ?? 0,
    durationMs: extra.durationMs,
  };
}

// ------------------------------------------------------------------------------------------------

function canonicalOf(item: PreparedItem): CompanySnapshot {
  return item.canonical ?? (JSON.parse(jsonOf(item)) as CompanySnapshot);
}

interface BatchReader {
  /** Up to `size` items with pairwise disjoint identifiers; empty when the stream is done. */
  next(): Promise<{ items: PreparedItem[]; skipped: number }>;
  requeue(items: PreparedItem[]): void;
  /** Lets the source release what it holds (a file handle, a connection) when the run stops early. */
  close(): Promise<void>;
}

type Warn = RunDailyOptions['logger'];

/**
 * A snapshot that makes preparation, merge or derivation throw (a source bug, an odd payload) is
 * skipped and logged: failing the run would fail its every retry on the same snapshot. But when
 * that many in a row fail, the cause is not the data (a missing dictionary, a broken deploy), and
 * the run stops rather than skip a whole registry.
 */
interface Skips {
  skip(e: unknown, message: string, fields?: object): void;
  succeeded(): void;
}

export const MAX_FAILURES_IN_A_ROW = 100;

function createSkips(logger: Warn): Skips {
  let inARow = 0;
  return {
    skip(e, message, fields = {}) {
      const reason = e instanceof Error ? e.message : String(e);
      logger?.warn({ ...fields, err: reason }, message);
      if (++inARow >= MAX_FAILURES_IN_A_ROW) throw new Error(`${inARow} snapshots in a row could not be processed; the last: ${reason}`);
    },
    succeeded() {
      inARow = 0;
    },
  };
}

/**
 * A source's snapshots, prepared on this thread, one entry at a time. The canonical object is let
 * go as soon as the item is prepared (planning parses its JSON again): held while its batch waits
 * for the batch before it, every item's object graph survived young-generation collections, and
 * copying and then marking them cost more than parsing again (docs/benchmarks.md, "Fourth pass").
 * A company that is probably new (`withColumns()`) has its row's fields derived first.
 */
function preparedInProcess(stream: AsyncIterable<CompanySnapshot>, owned: boolean, withColumns: () => boolean): PreparedChunks {
  const iterator = stream[Symbol.asyncIterator]();
  let done = false;
  return {
    async next() {
      if (done) return null;
      const r = await iterator.next();
      if (r.done) {
        done = true;
        return null;
      }
      const entry = prepareEntry(r.value, withColumns(), owned);
      if (!isSkip(entry)) entry.canonical = null;
      return [entry];
    },
    async close() {
      if (!done) await iterator.return?.();
    },
  };
}

function createBatchReader(chunks: PreparedChunks, size: number, skips: Skips, signal?: AbortSignal): BatchReader {
  let buffer: PreparedEntry[] = [];
  let pos = 0;
  let requeued: PreparedItem[] = [];
  let seq = 0;
  let held: PreparedItem | null = null;
  let done = false;
  return {
    requeue(items) {
      requeued = requeued.concat(items);
    },
    async close() {
      if (!done) await chunks.close();
    },
    async next() {
      const items: PreparedItem[] = [];
      const keys = new Set<string>();
      let skipped = 0;
      // Two snapshots of one company never share a batch: the later one waits for the next, so
      // the lookup it gets already reflects the earlier one.
      const take = (item: PreparedItem): boolean => {
        for (const id of item.identifiers) if (keys.has(`${id.type}:${id.value}`)) return false;
        for (const id of item.identifiers) keys.add(`${id.type}:${id.value}`);
        items.push(item);
        return true;
      };
      const pending = requeued;
      requeued = [];
      for (let i = 0; i < pending.length; i++) {
        if (!take(pending[i]!)) {
          requeued = pending.slice(i).concat(requeued);
          return { items, skipped };
        }
      }
      if (held) {
        if (!take(held)) return { items, skipped };
        held = null;
      }
      while (!done && items.length < size) {
        signal?.throwIfAborted();
        if (pos === buffer.length) {
          const chunk = await chunks.next();
          if (chunk === null) {
            done = true;
            break;
          }
          buffer = chunk;
          pos = 0;
          continue;
        }
        const entry = buffer[pos++]!;
        if (isSkip(entry)) {
          skipped++;
          if (entry.error !== null) skips.skip(entry.error, 'snapshot skipped: it could not be prepared');
          continue;
        }
        entry.seq = ++seq;
        if (!take(entry)) {
          held = entry;
          break;
        }
      }
      return { items, skipped };
    },
  };
}

interface PlannedUpdate {
  row: CompanyUpdateRow;
  item: PreparedItem;
  events: DetectedEvent[];
  newIdentifiers: IdentifierRow[];
  countsAsUpdated: boolean;
  becameDeleted: boolean;
}

/**
 * The lines planned in the last few batches, by identifier and by company id, with their stream
 * positions. A retried line (its write lost a race) may come back after a later line of the same
 * company was applied; it is then superseded and dropped, so the last line always wins.
 */
interface RecentLines {
  supersedes(keys: readonly string[], seq: number): boolean;
  remember(seen: Map<string, number>): void;
}

const RECENT_BATCHES = 4;

function createRecentLines(): RecentLines {
  const batches: Map<string, number>[] = [];
  return {
    supersedes(keys, seq) {
      for (const batch of batches) {
        for (const key of keys) {
          const later = batch.get(key);
          if (later !== undefined && later > seq) return true;
        }
      }
      return false;
    },
    remember(seen) {
      batches.unshift(seen);
      if (batches.length > RECENT_BATCHES) batches.pop();
    },
  };
}

function lineKeys(item: PreparedItem, companyId: string | null): string[] {
  const keys = item.identifiers.map((x) => `${x.type}:${x.value}`);
  if (companyId !== null) keys.push(`#${companyId}`);
  return keys;
}

interface BatchPlan {
  newRows: NewCompanyRow[];
  newItems: PreparedItem[];
  newIdentifiers: IdentifierRow[];
  updates: PlannedUpdate[];
  fingerprintOnly: { id: string; fingerprint: string }[];
  unchanged: number;
  skipped: number;
  deferred: PreparedItem[];
  /** Lines planned here (see RecentLines). */
  seen: Map<string, number>;
}

const MAX_ATTEMPTS = 5;

/**
 * The batch's companies as stored (lookupCompaniesForBatch), or none at all when `assumeNew`:
 * the registry was empty when the run began and lines naming a company already stored have been
 * rare, so the lookup (about a sixth of PostgreSQL's work on a first load) is skipped and every
 * line is taken as a new company. A line that is not (a company named twice in the file, or
 * stored meanwhile by another source's run) loses its identifiers' unique check in writeBatch and
 * is retried with a lookup, exactly as a lost race is. That costs its batch a second identifier
 * insert, so the assumption ends once such lines are more than one in NOT_NEW_TOLERANCE.
 */
const NOT_NEW_TOLERANCE = 10_000;

function lookupBatch(db: RegistryExecutor, sourceName: string, items: PreparedItem[], assumeNew: boolean): Promise<(MatchedCompany | null)[]> {
  if (items.length === 0 || (assumeNew && items.every((item) => item.attempts === 0))) return Promise.resolve(items.map(() => null));
  return lookupCompaniesForBatch(db, sourceName, items);
}

async function planBatch(db: RegistryExecutor, date: string, items: PreparedItem[], matches: (MatchedCompany | null)[], skipped: number, skips: Skips, recent: RecentLines): Promise<BatchPlan> {
  const plan: BatchPlan = { newRows: [], newItems: [], newIdentifiers: [], updates: [], fingerprintOnly: [], unchanged: 0, skipped, deferred: [], seen: new Map() };
  const claimed = new Set<string>();
  const fresh: PreparedItem[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const match = matches[i];
    const keys = lineKeys(item, match?.id ?? null);
    if (item.attempts > 0 && recent.supersedes(keys, item.seq)) {
      plan.unchanged++;
      continue;
    }
    // Disjoint identifiers can still name one company (NIP in one line, KRS in another).
    if (match && claimed.has(match.id)) {
      plan.deferred.push(item);
      continue;
    }
    for (const key of keys) plan.seen.set(key, item.seq);
    if (!match) {
      fresh.push(item);
      continue;
    }
    claimed.add(match.id);
    try {
      planExisting(plan, date, item, match);
      skips.succeeded();
    } catch (e) {
      plan.skipped++;
      skips.skip(e, 'snapshot skipped: merging or diffing it failed', { company_id: match.id });
    }
    item.canonical = null;
  }
  if (fresh.length > 0) {
    const ids = await allocateCompanyIds(db, fresh.length);
    fresh.forEach((item, i) => {
      let row: CompanyRowData;
      try {
        if (item.columnsError !== null) throw new Error(item.columnsError);
        row = item.row ?? { snapshot: jsonOf(item), fields: item.fields ?? companyRowFields(deriveCompanyColumns(canonicalOf(item)), item.fingerprint, item.fingerprint) };
        item.canonical = null;
        item.fields = null;
        skips.succeeded();
      } catch (e) {
        plan.skipped++;
        skips.skip(e, 'snapshot skipped: its search columns could not be derived');
        return;
      }
      const id = ids[i]!;
      plan.newItems.push(item);
      plan.newRows.push({ id, row });
      // The canonical snapshot's identifiers are these (normalised, one per type), in rank order.
      for (const ident of item.identifiers) plan.newIdentifiers.push({ companyId: id, type: ident.type, value: ident.value });
    });
  }
  return plan;
}

function planExisting(plan: BatchPlan, date: string, item: PreparedItem, match: MatchedCompany): void {
  if (match.sameFingerprint || match.snapshotJson === null) {
    plan.unchanged++;
    return;
  }
  // Parsed here, so that the stored snapshot dies young (see PreparedItem.canonical).
  const prev = JSON.parse(match.snapshotJson) as CompanySnapshot;
  match.snapshotJson = null;
  const incoming = canonicalOf(item);
  // Usually nothing of the stored snapshot survives the merge: the incoming one is the result,
  // already serialised and hashed.
  const reuse = mergeIsIncoming(prev, incoming);
  const merged = reuse ? incoming : mergeSnapshots(prev, incoming);
  const json = reuse ? jsonOf(item) : JSON.stringify(merged);
  // Content hashes in base64, as the lookup returns them; the incoming one is its fingerprint.
  const hash = reuse ? item.fingerprint : contentHash(json).toString('base64');
  if (hash === match.contentHash) {
    plan.fingerprintOnly.push({ id: match.id, fingerprint: item.fingerprint });
    plan.unchanged++;
    return;
  }
  const events = diffSnapshots(prev, merged);
  const columns: CompanyColumns = deriveCompanyColumns(merged);
  const known = new Set(prev.identity.identifiers.map((x) => `${x.type}:${x.value}`));
  plan.updates.push({
    item,
    events,
    row: {
      id: match.id,
      revision: match.revision,
      snapshotJson: json,
      fields: companyRowFields(columns, hash, item.fingerprint),
      lastChangedDate: events.length > 0 ? date : null,
    },
    newIdentifiers: merged.identity.identifiers
      .filter((x) => !known.has(`${x.type}:${x.value}`))
      .map((x) => ({ companyId: match.id, type: x.type, value: x.value })),
    // A company counts once a day, and a company first seen today counts as new only.
    countsAsUpdated: events.length > 0 && match.firstSeenDate !== date && match.lastChangedDate !== date,
    becameDeleted: match.status !== 'DELETED' && columns.status === ('DELETED' satisfies CompanyStatus),
  });
}

interface BatchOutcome {
  counters: RunCounters;
  /** Lines planned as new whose company turned out to exist (see planBatch's assumeNew). */
  notNew: number;
  deferred: PreparedItem[];
}

async function writeBatch(db: RegistryExecutor, runId: string | null, sourceName: string, date: string, plan: BatchPlan, processedItems: number): Promise<BatchOutcome> {
  return db.transaction().execute(async (trx) => {
    await insertCompanies(trx, sourceName, date, plan.newRows);
    const written = await updateCompanies(trx, sourceName, plan.updates.map((u) => u.row));
    const applied = plan.updates.filter((u) => written.has(u.row.id));
    const conflicts = await insertIdentifiers(trx, [...plan.newIdentifiers, ...applied.flatMap((u) => u.newIdentifiers)]);

    // A new company whose identifier another company took meanwhile is not new: it is retried,
    // and the retry's lookup finds that company.
    const newIds = new Set(plan.newRows.map((r) => r.id));
    const lostNew = new Set(conflicts.filter((c) => newIds.has(c.companyId)).map((c) => c.companyId));
    await deleteCompanies(trx, [...lostNew]);
    await updateFingerprints(trx, sourceName, plan.fingerprintOnly);

    const events: NewEventRow[] = [];
    for (const u of applied) for (const e of u.events) events.push({ ...e, companyId: u.row.id });
    if (events.length > 0) {
      await lockEventsWriter(trx);
      await insertEvents(trx, date, runId, events);
    } else {
      // A batch without events commits without waiting for its WAL to reach the disk
      // (docs/registry.md, "Durability of a batch"): should PostgreSQL itself crash in the next
      // fraction of a second, the batch is lost whole, its counters with it, and the run's
      // resumption writes it again. Nobody can have relied on it: anything committed later
      // (the run's completion, a watchlist add) flushes the WAL up to itself, this batch
      // included. A batch with events waits, as every other writer does, because a feed may
      // hand its events out at once.
      await sql`SET LOCAL synchronous_commit = off`.execute(trx);
    }

    const deferred = [
      ...plan.deferred,
      ...plan.updates.filter((u) => !written.has(u.row.id)).map((u) => u.item),
      ...plan.newItems.filter((_, i) => lostNew.has(plan.newRows[i]!.id)),
    ];
    const counters: RunCounters = {
      new: plan.newRows.length - lostNew.size,
      updated: applied.filter((u) => u.countsAsUpdated).length,
      deleted: applied.filter((u) => u.becameDeleted).length,
      events: events.length,
      processed: processedItems - deferred.length,
      skipped: plan.skipped,
    };
    if (runId !== null) await addRunCounters(trx, runId, counters);
    return { counters, deferred, notNew: lostNew.size };
  });
}

/** About 6,000 companies: below that, starting the worker (0.5–1 s: it compiles its modules) costs more than it saves. */
export const WORKER_MIN_FILE_BYTES = 8_000_000;

/** Bytes of the file read to estimate its lines. */
const LINE_SAMPLE_BYTES = 1 << 20;

/** The file's lines, estimated from its size and the line length of its first megabyte. */
export function estimateLines(path: string, size: number): number {
  const sample = Buffer.allocUnsafe(Math.min(size, LINE_SAMPLE_BYTES));
  let read = 0;
  const fd = openSync(path, 'r');
  try {
    read = readSync(fd, sample, 0, sample.length, 0);
  } finally {
    closeSync(fd);
  }
  let newlines = 0;
  for (let i = sample.indexOf(0x0a, 0); i >= 0 && i < read; i = sample.indexOf(0x0a, i + 1)) newlines++;
  return newlines === 0 ? 1 : Math.round((size * newlines) / read);
}

/**
 * A full export (every company of the source, most of them unchanged since the last run) rather
 * than a delta (the changed ones): at least half as many lines as the registry has companies. On
 * an export the worker pays: each unchanged line only has its fingerprint compared on this thread
 * (a day of 400,000 lines, 1 % changed: 17,367–17,830 lines/s here, 19,383–19,852 in the worker;
 * docs/benchmarks.md, "Seventh pass"). On a delta it does not (see prepareInWorker).
 */
export function isFullExport(lines: number, companies: number): boolean {
  return lines * 2 >= companies;
}

async function looksLikeFullExport(db: RegistryExecutor, path: string, size: number): Promise<boolean> {
  try {
    return isFullExport(estimateLines(path, size), await registrySize(db));
  } catch {
    // Unreadable now: the stream reports it as it always has.
    return false;
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    // The stream reports a missing file as it always has.
    return 0;
  }
}

async function processStream(db: RegistryExecutor, run: DailyRun, options: RunDailyOptions, now: () => number): Promise<void> {
  // Indexes an earlier run dropped and could not build again (its process died) are built first.
  await restoreDeferredIndexes(db, run.id);
  let deferred = false;
  try {
    await processBatches(db, run, options, now, async (firstLoad) => {
      if (!firstLoad) return;
      // Only an optimisation: if the indexes cannot be dropped (say, the role does not own the
      // tables), the load goes on with them in place. The transaction dropped nothing then.
      deferred = (await deferSecondaryIndexes(db, run.id).catch((e: unknown) => {
        options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'indexes not deferred: the load keeps them in place');
        return [];
      })).length > 0;
    });
  } finally {
    // Completed or failed, the run leaves the indexes as it found them. Should building them
    // fail, the run still ends as it would have; the next run (or process start) builds them.
    if (deferred) await restoreDeferredIndexes(db, run.id).catch((e: unknown) => {
      options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'deferred indexes not built yet');
    });
  }
}

/** `onStart(firstLoad)`: called once the run knows whether it is a first load that defers its indexes. */
async function processBatches(db: RegistryExecutor, run: DailyRun, options: RunDailyOptions, now: () => number, onStart: (firstLoad: boolean) => Promise<void>): Promise<void> {
  const { date, source } = options;
  const batchSize = options.batchSize ?? 2000;
  const skips = createSkips(options.logger);
  const origin = fileSourceOrigin(source);
  // Measured (docs/benchmarks.md): the worker speeds up a first load of a large file and a day
  // of a full export, but makes a delta of changed companies slower (this thread then parses
  // each changed snapshot's JSON again to merge it), so by default it serves only those two.
  let assumeNew = !(await hasAnyCompany(db));
  let notNewLines = 0;
  let linesWritten = 0;
  const size = origin === null ? 0 : fileSize(origin.path);
  const inWorker = origin !== null
    && (options.prepareInWorker ?? (size >= WORKER_MIN_FILE_BYTES && (assumeNew || (await looksLikeFullExport(db, origin.path, size)))));
  const chunks = inWorker
    ? prepareFileInWorker(origin.path, date, origin.options, assumeNew)
    // A file source's snapshots are freshly parsed and held by nothing else; other sources may keep theirs.
    : preparedInProcess(source.snapshotsForDate(date, { signal: options.signal }), origin !== null, () => assumeNew);
  try {
    await onStart(assumeNew && (options.deferIndexes ?? inWorker));
  } catch (e) {
    await chunks.close().catch(() => {});
    throw e;
  }
  const reader = createBatchReader(chunks, batchSize, skips, options.signal);
  const recent = createRecentLines();
  const started = now();
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
        if (inFlight === null) break;
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
      inFlight = writeBatch(db, run.id, source.name, date, plan, items.length);
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
