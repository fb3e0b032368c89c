import { runIfSnapshotWorker, startSnapshotWorker, type SnapshotSource, type SnapshotWorkerBuild } from '../../db/snapshot-worker.ts';
import { readIndexLinesById } from './repo.ts';
import type { Csr, Pause, Postings } from './search-index-arrays.ts';
import { SearchIndexBuilder } from './search-index-builder.ts';
import { parseIndexLines } from './search-index-lines.ts';
import { SearchIndex, type IndexDerived, type IndexParts } from './search-index.ts';
import { yieldToEventLoop } from '../../lib/event-loop.ts';

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

/** Where a worker reads the companies from: its own connection, in a snapshot exported by the serving thread (companies per query: one string aggregated by PostgreSQL each). */
export type WorkerBuildSource = SnapshotSource;

/** A build of the search index in progress in a worker thread (src/db/snapshot-worker.ts). */
export type WorkerBuild = SnapshotWorkerBuild<SearchIndex>;

export function startWorkerBuild(pause: Pause, source: WorkerBuildSource): WorkerBuild {
  return startSnapshotWorker<WireIndex, SearchIndex>(import.meta.url, ROLE, 'search index worker', source, (wire) => fromWire(wire, pause));
}

runIfSnapshotWorker<WireIndex>(ROLE, 'search-build', () => {
  const builder = new SearchIndexBuilder();
  return {
    read: (trx, chunkSize) =>
      readIndexLinesById(trx, chunkSize, async (lines) => {
        // The next page's query is sent before this one is parsed (readIndexLinesById): let it leave first.
        await yieldToEventLoop();
        parseIndexLines(lines, (row) => builder.add(row));
      }),
    build: async () => toWire(await builder.build()),
  };
});
