import { isMainThread, parentPort, workerData, type Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { createDatabase, type DatabaseConnection } from '../../db/database.ts';
import { startTsWorker } from '../../lib/ts-worker.ts';
import { readIndexLinesById } from './repo.ts';
import type { Csr, Pause, Postings } from './search-index-arrays.ts';
import { SearchIndexBuilder } from './search-index-builder.ts';
import { parseIndexLines } from './search-index-lines.ts';
import { SearchIndex, type IndexDerived, type IndexParts } from './search-index.ts';

/**
 * A full build of the search index in a worker thread (docs/search.md, "Freshness"). The worker
 * opens a connection of its own (the serving database's connection string) and reads the companies itself, in
 * the snapshot the serving thread exported (pg_export_snapshot) from the transaction it read the
 * index's cursor in, so the index and its cursor describe one state. It reads the index lines in
 * id order (one string a chunk: repo.ts readIndexLinesById), parses them, puts the rows in result
 * order, builds the columns, sorts the words and derives the posting lists, then hands every typed
 * array back by transfer (no copy). The serving thread reads nothing of it: what is left for it is
 * a few small dictionaries, rebuilt between pauses. A build in the serving thread itself
 * (SearchIndexBuilder with pauses) paused request handling for up to ~260 ms at 1,000,000
 * companies; rows read by the serving thread and sent to the worker still cost it 30-40 ms
 * garbage collections.
 */

const ROLE = 'regwatch-search-index-build';
/** Dictionary entries rebuilt between pauses. */
const DICTIONARY_SLICE = 16_384;
const SEP = '\x1e';

type ToMain = { type: 'imported' } | { type: 'read' } | { type: 'index'; index: WireIndex } | { type: 'fatal'; message: string };

/** An index as it crosses threads: typed arrays (transferred), and each dictionary as one string of its values in id order. */
interface WireIndex {
  parts: Omit<IndexParts, 'voivodeships' | 'legalForms' | 'cities' | 'codeIds'> & {
    voivodeships: string;
    legalForms: string;
    cities: string;
    codeIds: string;
  };
  derived: Omit<IndexDerived, 'prefix2Ids'> & {
    prefix2Ids: string;
  };
}

/** Dictionary values in id order (ids are 1-based and dense). */
function joinDictionary(map: ReadonlyMap<string, number>): string {
  const values: string[] = new Array(map.size);
  for (const [v, id] of map) values[id - 1] = v;
  return values.join(SEP);
}

async function splitDictionary(text: string, pause: Pause): Promise<Map<string, number>> {
  const map = new Map<string, number>();
  if (text === '') return map;
  const values = text.split(SEP);
  for (let i = 0; i < values.length; i++) {
    map.set(values[i]!, i + 1);
    if (i % DICTIONARY_SLICE === DICTIONARY_SLICE - 1) await pause();
  }
  return map;
}

function toWire(index: SearchIndex): { wire: WireIndex; transfer: ArrayBuffer[] } {
  const { parts, derived } = index.data;
  const wire: WireIndex = {
    parts: {
      ...parts,
      voivodeships: joinDictionary(parts.voivodeships),
      legalForms: joinDictionary(parts.legalForms),
      cities: joinDictionary(parts.cities),
      codeIds: joinDictionary(parts.codeIds),
    },
    derived: {
      ...derived,
      prefix2Ids: joinDictionary(derived.prefix2Ids),
    },
  };
  const buffers = new Set<ArrayBuffer>();
  const add = (a: ArrayBufferView) => buffers.add(a.buffer as ArrayBuffer);
  const p = wire.parts;
  for (const a of [p.ids, p.days, p.keys, p.status, p.voiv, p.legal, p.flags, p.city, p.postal, p.sortedWords.bytes, p.sortedWords.offsets])
    add(a);
  for (const c of [p.codes, p.words] as Csr[]) {
    add(c.offsets);
    add(c.values);
  }
  const d = wire.derived;
  for (const a of [d.dims, d.histogram.keys, d.histogram.counts, d.packedKeys, d.lookup.ids, d.lookup.rows]) add(a);
  for (const ps of [d.city, d.postal, d.code, d.prefix2, d.word, d.packedRows] as Postings[]) {
    add(ps.offsets);
    add(ps.rows);
  }
  return { wire, transfer: [...buffers] };
}

async function fromWire(wire: WireIndex, pause: Pause): Promise<SearchIndex> {
  const { parts: p, derived: d } = wire;
  const parts: IndexParts = {
    ...p,
    voivodeships: await splitDictionary(p.voivodeships, pause),
    legalForms: await splitDictionary(p.legalForms, pause),
    cities: await splitDictionary(p.cities, pause),
    codeIds: await splitDictionary(p.codeIds, pause),
  };
  return SearchIndex.fromDerived(parts, { ...d, prefix2Ids: await splitDictionary(d.prefix2Ids, pause) });
}

/** Where a worker reads the companies from: its own connection, in a snapshot exported by the serving thread. */
export interface WorkerBuildSource {
  /** The serving database's connection string (connectionOf): the worker opens one connection of its own with it. */
  connection: DatabaseConnection;
  /** pg_export_snapshot() of a transaction kept open until `imported`: the worker reads exactly that state. */
  snapshot: string;
  /** Companies per query (one string aggregated by PostgreSQL each). */
  chunkSize: number;
}

/** A build in progress in a worker thread. Every promise rejects if the worker fails or the build is aborted. */
export interface WorkerBuild {
  /** The worker's transaction has imported the snapshot: the exporting transaction may end. */
  readonly imported: Promise<void>;
  /** Every company is read (the worker's connection is closed); the index is being finished. */
  readonly read: Promise<void>;
  /** The index, its arrays handed over to this thread by transfer. */
  finish(): Promise<SearchIndex>;
  /** Stops the worker (a build given up): the pending promises reject. */
  abort(): Promise<void>;
}

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

export function startWorkerBuild(pause: Pause, source: WorkerBuildSource): WorkerBuild {
  const worker: Worker = startTsWorker(import.meta.url, { role: ROLE, source });
  const imported = deferred<void>();
  const read = deferred<void>();
  const index = deferred<WireIndex>();
  let settled = false;
  const fail = (e: Error) => {
    if (settled) return;
    settled = true;
    for (const d of [imported, read, index]) d.reject(e);
  };
  worker.on('message', (m: ToMain) => {
    if (m.type === 'imported') imported.resolve();
    else if (m.type === 'read') read.resolve();
    else if (m.type === 'index') {
      settled = true;
      index.resolve(m.index);
    } else fail(new Error(`search index worker: ${m.message}`));
  });
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => fail(new Error(`search index worker stopped (exit code ${code})`)));

  return {
    imported: imported.promise,
    read: read.promise,
    async finish() {
      const wire = await index.promise;
      await worker.terminate();
      return fromWire(wire, pause);
    },
    async abort() {
      fail(new Error('search index build stopped'));
      await worker.terminate();
    },
  };
}

async function runWorker(source: WorkerBuildSource): Promise<void> {
  const port = parentPort!;
  // Alive until terminated by the serving thread, so the index message is never cut off by an exit.
  port.on('message', () => {});
  const post = (m: ToMain, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  if (!/^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i.test(source.snapshot)) throw new Error(`not a snapshot id: ${source.snapshot}`);
  const { url, applicationName } = source.connection;
  const handle = createDatabase(url, { max: 1, applicationName: `${applicationName}:search-build` });
  const builder = new SearchIndexBuilder();
  try {
    await handle.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        await sql`SET TRANSACTION SNAPSHOT ${sql.lit(source.snapshot)}`.execute(trx);
        post({ type: 'imported' });
        await readIndexLinesById(trx, source.chunkSize, async (lines) => {
          // The next page's query is sent before this one is parsed (readIndexLinesById): let it leave first.
          await new Promise((resolve) => setImmediate(resolve));
          parseIndexLines(lines, (row) => builder.add(row));
        });
      });
  } finally {
    await handle.close();
  }
  post({ type: 'read' });
  const { wire, transfer } = toWire(await builder.build());
  post({ type: 'index', index: wire }, transfer);
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  const { source } = workerData as { source: WorkerBuildSource };
  runWorker(source).catch((e: unknown) =>
    parentPort!.postMessage({ type: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies ToMain),
  );
}
