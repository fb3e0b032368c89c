import { isMainThread, parentPort, workerData, type Worker } from 'node:worker_threads';
import { startTsWorker } from '../../lib/ts-worker.ts';
import type { Csr, Pause, Postings } from './search-index-arrays.ts';
import { SearchIndexBuilder } from './search-index-builder.ts';
import { parseIndexLines } from './search-index-lines.ts';
import { SearchIndex, type IndexDerived, type IndexParts } from './search-index.ts';

/**
 * A full build of the search index in a worker thread (docs/search.md, "Freshness"). The serving
 * thread reads the index lines from PostgreSQL (in id order, one string a chunk: repo.ts
 * readIndexLinesById) and sends them on as they came; the worker parses them, puts the rows in
 * result order, builds the columns, sorts the words and derives the posting lists, then hands
 * every typed array back by transfer (no copy). What is left for the serving thread is a few small dictionaries,
 * rebuilt between pauses. A build in the serving thread itself (SearchIndexBuilder with pauses)
 * paused request handling for up to ~260 ms at 1,000,000 companies; this one does not.
 */

const ROLE = 'regwatch-search-index-build';
/** Chunks of lines sent and not yet parsed: enough to keep the worker busy, few enough to bound memory. */
const IN_FLIGHT = 4;
/** Dictionary entries rebuilt between pauses. */
const DICTIONARY_SLICE = 16_384;
const SEP = '\x1e';

type ToWorker = { type: 'lines'; text: string } | { type: 'finish' };
type ToMain = { type: 'ack' } | { type: 'index'; index: WireIndex } | { type: 'fatal'; message: string };

/** An index as it crosses threads: typed arrays (transferred), and each dictionary as one string of its values in id order. */
interface WireIndex {
  parts: Omit<IndexParts, 'voivodeships' | 'legalForms' | 'cities' | 'codeIds'> & {
    voivodeships: string;
    legalForms: string;
    cities: string;
    codeIds: string;
  };
  derived: Omit<IndexDerived, 'histogram' | 'prefix2Ids'> & {
    histogramKeys: Float64Array;
    histogramCounts: Float64Array;
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
      histogramKeys: Float64Array.from(derived.histogram.keys()),
      histogramCounts: Float64Array.from(derived.histogram.values()),
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
  for (const a of [d.dims, d.histogramKeys, d.histogramCounts, d.packedKeys, d.lookup.ids, d.lookup.rows]) add(a);
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
  const histogram = new Map<number, number>();
  for (let i = 0; i < d.histogramKeys.length; i++) histogram.set(d.histogramKeys[i]!, d.histogramCounts[i]!);
  const { histogramKeys: _k, histogramCounts: _c, ...rest } = d;
  return SearchIndex.fromDerived(parts, { ...rest, histogram, prefix2Ids: await splitDictionary(d.prefix2Ids, pause) });
}

/** A build in progress in a worker thread: feed it the index lines in result order, then finish. */
export interface WorkerBuild {
  /** Sends one chunk of index lines (resolves once the worker has room for more). */
  add(lines: string): Promise<void>;
  /** The index of every line sent, handed over to this thread. */
  finish(): Promise<SearchIndex>;
  /** Stops the worker (a build given up). */
  abort(): Promise<void>;
}

export function startWorkerBuild(pause: Pause): WorkerBuild {
  const worker: Worker = startTsWorker(import.meta.url, { role: ROLE });
  let inFlight = 0;
  let failure: Error | null = null;
  let waiting: { resolve: () => void; reject: (e: Error) => void } | null = null;
  let result: { resolve: (w: WireIndex) => void; reject: (e: Error) => void } | null = null;
  let done = false;
  const fail = (e: Error) => {
    failure ??= e;
    waiting?.reject(failure);
    result?.reject(failure);
    waiting = null;
    result = null;
  };
  worker.on('message', (m: ToMain) => {
    if (m.type === 'ack') {
      inFlight--;
      waiting?.resolve();
      waiting = null;
    } else if (m.type === 'index') {
      done = true;
      result?.resolve(m.index);
      result = null;
    } else fail(new Error(`search index worker: ${m.message}`));
  });
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => {
    if (!done) fail(new Error(`search index worker stopped (exit code ${code})`));
  });
  const send = (m: ToWorker) => worker.postMessage(m);

  return {
    async add(lines) {
      if (failure) throw failure;
      send({ type: 'lines', text: lines });
      inFlight++;
      while (inFlight >= IN_FLIGHT) {
        if (failure) throw failure;
        await new Promise<void>((resolve, reject) => {
          waiting = { resolve, reject };
        });
      }
    },
    async finish() {
      if (failure) throw failure;
      const wire = await new Promise<WireIndex>((resolve, reject) => {
        result = { resolve, reject };
        send({ type: 'finish' });
      });
      await worker.terminate();
      return fromWire(wire, pause);
    },
    async abort() {
      done = true;
      await worker.terminate();
    },
  };
}

function runWorker(): void {
  const port = parentPort!;
  const builder = new SearchIndexBuilder();
  port.on('message', (m: ToWorker) => {
    void (async () => {
      if (m.type === 'lines') {
        parseIndexLines(m.text, (row) => builder.add(row));
        port.postMessage({ type: 'ack' } satisfies ToMain);
        return;
      }
      const index = await builder.build();
      const { wire, transfer } = toWire(index);
      port.postMessage({ type: 'index', index: wire } satisfies ToMain, transfer);
    })().catch((e: unknown) =>
      port.postMessage({ type: 'fatal', message: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies ToMain),
    );
  });
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) runWorker();
