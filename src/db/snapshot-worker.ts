import { setPriority } from 'node:os';
import { isMainThread, parentPort, workerData, type Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { startTsWorker } from '../lib/ts-worker.ts';
import { createDatabase, type DatabaseConnection, type Trx } from './database.ts';
import type { RegistryExecutor } from '../registry/store.ts';

/**
 * An in-memory index built in a worker thread from one exported snapshot of the database (the
 * search index: src/modules/companies/search-index-worker.ts; the match index:
 * src/modules/match/match-index-worker.ts). The serving thread reads the index's cursor in a
 * repeatable-read transaction, exports its snapshot (pg_export_snapshot) and keeps the transaction
 * open until the worker has imported it, so the index and its cursor describe one state. The worker
 * opens a connection of its own (the serving database's connection string), reads the rows, builds
 * the index and hands it back as typed arrays by transfer (no copy) plus a few strings; nothing of
 * the rows crosses the serving thread, whose event loop keeps answering requests.
 *
 * The worker thread runs at the lowest CPU priority (nice 19: on Linux a thread's own, the
 * serving thread keeps 0): a build is background work, and on a machine of two cores the build's
 * thread and its PostgreSQL backend would otherwise take both while a request waits for one.
 */

/** The worker thread's nice value. */
const WORKER_NICE = 19;

/** Where a worker reads from: its own connection, in a snapshot exported by the serving thread. */
export interface SnapshotSource {
  /** The serving database's connection string (connectionOf): the worker opens one connection of its own with it. */
  connection: DatabaseConnection;
  /** pg_export_snapshot() of a transaction kept open until `imported`: the worker reads exactly that state. */
  snapshot: string;
  /** Rows per query. */
  chunkSize: number;
}

/** A build in progress in a worker thread. Every promise rejects if the worker fails or the build is aborted. */
export interface SnapshotWorkerBuild<T> {
  /** The worker's transaction has imported the snapshot: the exporting transaction may end. */
  readonly imported: Promise<void>;
  /** Every row is read (the worker's connection is closed); the index is being finished. */
  readonly read: Promise<void>;
  /** The index, its arrays handed over to this thread by transfer. The worker ends, whether it succeeded or failed. */
  finish(): Promise<T>;
  /** Stops the worker (a build given up): the pending promises reject. */
  abort(): Promise<void>;
}

/** What a kind of index does in the worker: read the rows in the imported snapshot, then build what crosses back. */
export interface SnapshotWorkerJob<W> {
  read(trx: Trx, chunkSize: number): Promise<unknown>;
  build(): Promise<{ wire: W; transfer: ArrayBuffer[] }>;
}

type ToMain<W> = { type: 'imported' } | { type: 'read' } | { type: 'index'; index: W } | { type: 'fatal'; message: string };

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Awaited later (or never, on a failure before): not an unhandled rejection meanwhile.
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/**
 * Starts the worker module `entry` (its `import.meta.url`) in role `role`; `name` is how failures
 * are told (e.g. "search index worker"); `fromWire` turns what crosses back into the index.
 */
export function startSnapshotWorker<W, T>(
  entry: string,
  role: string,
  name: string,
  source: SnapshotSource,
  fromWire: (wire: W) => Promise<T>,
): SnapshotWorkerBuild<T> {
  const worker: Worker = startTsWorker(entry, { role, source });
  const imported = deferred<void>();
  const read = deferred<void>();
  const index = deferred<W>();
  let settled = false;
  const fail = (e: Error) => {
    if (settled) return;
    settled = true;
    for (const d of [imported, read, index]) d.reject(e);
  };
  worker.on('message', (m: ToMain<W>) => {
    if (m.type === 'imported') imported.resolve();
    else if (m.type === 'read') read.resolve();
    else if (m.type === 'index') {
      settled = true;
      index.resolve(m.index);
    } else fail(new Error(`${name}: ${m.message}`));
  });
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => fail(new Error(`${name} stopped (exit code ${code})`)));

  return {
    imported: imported.promise,
    read: read.promise,
    async finish() {
      let wire: W;
      try {
        wire = await index.promise;
      } finally {
        // Done with, or failed: either way the worker (and its connection) goes.
        await worker.terminate();
      }
      return fromWire(wire);
    },
    async abort() {
      fail(new Error(`${name}: build stopped`));
      await worker.terminate();
    },
  };
}

/**
 * The serving thread's side of a build: reads the index's cursor (`readCursor`) in a read-only
 * repeatable-read transaction, exports its snapshot, starts the worker with it (`start`) and
 * ends the transaction once the worker has imported it. A failure aborts the worker.
 */
export async function startInExportedSnapshot<C, T>(
  db: RegistryExecutor,
  readCursor: (trx: RegistryExecutor) => Promise<C>,
  start: (snapshot: string) => SnapshotWorkerBuild<T>,
): Promise<{ cursor: C; build: SnapshotWorkerBuild<T> }> {
  let build: SnapshotWorkerBuild<T> | null = null;
  try {
    const cursor = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const cursor = await readCursor(trx);
        const { rows } = await sql<{ snapshot: string }>`SELECT pg_export_snapshot() AS snapshot`.execute(trx);
        build = start(rows[0]!.snapshot);
        await build.imported;
        return cursor;
      });
    return { cursor, build: build! };
  } catch (e) {
    await (build as SnapshotWorkerBuild<T> | null)?.abort();
    throw e;
  }
}

async function runJob<W>(source: SnapshotSource, applicationSuffix: string, job: SnapshotWorkerJob<W>): Promise<void> {
  const port = parentPort!;
  // On Linux a nice value is a thread's own; elsewhere it would lower the whole process.
  if (process.platform === 'linux') setPriority(WORKER_NICE);
  // Alive until terminated by the serving thread, so the index message is never cut off by an exit.
  port.on('message', () => {});
  const post = (m: ToMain<W>, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  if (!/^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i.test(source.snapshot)) throw new Error(`not a snapshot id: ${source.snapshot}`);
  const { url, applicationName } = source.connection;
  const handle = createDatabase(url, { max: 1, applicationName: `${applicationName}:${applicationSuffix}` });
  try {
    await handle.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        await sql`SET TRANSACTION SNAPSHOT ${sql.lit(source.snapshot)}`.execute(trx);
        post({ type: 'imported' });
        await job.read(trx, source.chunkSize);
      });
  } finally {
    await handle.close();
  }
  post({ type: 'read' });
  const { wire, transfer } = await job.build();
  post({ type: 'index', index: wire }, transfer);
}

/**
 * In a worker module: when this thread is the worker started in role `role`, runs the job made
 * by `makeJob` (its connection's application name ends in `:applicationSuffix`).
 */
export function runIfSnapshotWorker<W>(role: string, applicationSuffix: string, makeJob: () => SnapshotWorkerJob<W>): void {
  if (isMainThread || (workerData as { role?: string } | null)?.role !== role) return;
  const { source } = workerData as { source: SnapshotSource };
  runJob(source, applicationSuffix, makeJob()).catch((e: unknown) =>
    parentPort!.postMessage({ type: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies ToMain<W>),
  );
}
