import { runIfSnapshotWorker, startSnapshotWorker, type SnapshotSource, type SnapshotWorkerBuild } from '../../db/snapshot-worker.ts';
import { MatchIndex, type MatchIndexParts } from './match-index.ts';
import { MatchIndexBuilder } from './match-index-builder.ts';
import { readMatchRows } from './repo.ts';

/**
 * A full build of the match index in a worker thread (docs/match.md, "Index"), as the search
 * index is built (src/db/snapshot-worker.ts): the worker reads every company's match row over its
 * own connection, in the snapshot the serving thread exported, tokenises them and builds the
 * index; its typed arrays come back by transfer, its words (vocabulary, cities and streets,
 * trigrams) as one string each, which the serving thread turns back into its dictionaries between
 * pauses. Built on the serving thread, each chunk of 5,000 rows read and tokenised held its event
 * loop for 50-90 ms, for the whole build (83 s at 1,000,000 companies).
 */

const ROLE = 'regwatch-match-index-build';
/** Dictionary entries rebuilt between pauses. */
const SLICE = 16_384;
/** Between words: text from PostgreSQL never holds a NUL. */
const SEP = '\0';

type Dictionaries = 'vocab' | 'vocabIds' | 'places' | 'placeIds' | 'trigramIds';

/** The index as it crosses threads: typed arrays (transferred), and each dictionary as one string of its words in id order. */
interface WireMatchIndex {
  arrays: Omit<MatchIndexParts, Dictionaries>;
  vocab: string;
  places: string;
  trigrams: string;
  /** Words in each (a dictionary of one empty word joins to the same string as none). */
  counts: [vocab: number, places: number, trigrams: number];
}

function toWire(p: MatchIndexParts): { wire: WireMatchIndex; transfer: ArrayBuffer[] } {
  const { vocab, vocabIds: _v, places, placeIds: _p, trigramIds, ...arrays } = p;
  const trigrams: string[] = new Array(trigramIds.size);
  for (const [g, id] of trigramIds) trigrams[id] = g;
  const transfer = new Set<ArrayBuffer>();
  for (const a of Object.values(arrays) as ArrayBufferView[]) transfer.add(a.buffer as ArrayBuffer);
  const wire: WireMatchIndex = {
    arrays,
    vocab: vocab.join(SEP),
    places: places.join(SEP),
    trigrams: trigrams.join(SEP),
    counts: [vocab.length, places.length, trigrams.length],
  };
  return { wire, transfer: [...transfer] };
}

/** The `count` words of `text` in order, and each word's position, SLICE words between pauses. */
async function splitWords(text: string, count: number, pause: () => Promise<void>): Promise<{ words: string[]; ids: Map<string, number> }> {
  const words: string[] = new Array(count);
  const ids = new Map<string, number>();
  for (let i = 0, from = 0; i < count; i++) {
    const to = i === count - 1 ? text.length : text.indexOf(SEP, from);
    const word = text.slice(from, to);
    words[i] = word;
    ids.set(word, i);
    from = to + 1;
    if (i % SLICE === SLICE - 1) await pause();
  }
  return { words, ids };
}

async function fromWire(wire: WireMatchIndex, pause: () => Promise<void>): Promise<MatchIndex> {
  const [vocabCount, placeCount, trigramCount] = wire.counts;
  const vocab = await splitWords(wire.vocab, vocabCount, pause);
  const places = await splitWords(wire.places, placeCount, pause);
  const trigrams = await splitWords(wire.trigrams, trigramCount, pause);
  return new MatchIndex({
    ...wire.arrays,
    vocab: vocab.words,
    vocabIds: vocab.ids,
    places: places.words,
    placeIds: places.ids,
    trigramIds: trigrams.ids,
  });
}

/** A build of the match index in progress in a worker thread. */
export type MatchWorkerBuild = SnapshotWorkerBuild<MatchIndex>;

export function startMatchWorkerBuild(pause: () => Promise<void>, source: SnapshotSource): MatchWorkerBuild {
  return startSnapshotWorker<WireMatchIndex, MatchIndex>(import.meta.url, ROLE, 'match index worker', source, (wire) =>
    fromWire(wire, pause),
  );
}

runIfSnapshotWorker<WireMatchIndex>(ROLE, 'match-build', () => {
  const builder = new MatchIndexBuilder();
  return {
    read: (trx, chunkSize) =>
      readMatchRows(trx, chunkSize, async (rows) => {
        for (const row of rows) builder.add(row);
      }),
    build: async () => toWire(await builder.buildParts()),
  };
});
