import type { CompanySnapshot } from '../model.ts';
import { isSkip, prepareEntry, type PreparedEntry, type PreparedItem } from '../prepare.ts';
import type { PreparedChunks } from '../prepare-worker.ts';
import type { Skips } from './skips.ts';

/** Reads a run's prepared snapshots in batches whose lines name pairwise different companies. */

export interface BatchReader {
  /** Up to `size` items with pairwise disjoint identifiers; empty when the stream is done. */
  next(): Promise<{ items: PreparedItem[]; skipped: number }>;
  requeue(items: PreparedItem[]): void;
  /** Lets the source release what it holds (a file handle, a connection) when the run stops early. */
  close(): Promise<void>;
}

/**
 * A source's snapshots, prepared on this thread, one entry at a time. The canonical object is let
 * go as soon as the item is prepared (planning parses its JSON again): held while its batch waits
 * for the batch before it, every item's object graph survived young-generation collections, and
 * copying and then marking them cost more than parsing again (docs/benchmarks.md).
 * A company that is probably new (`withColumns()`) has its row's fields derived first.
 */
export function preparedInProcess(stream: AsyncIterable<CompanySnapshot>, owned: boolean, withColumns: () => boolean): PreparedChunks {
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

/**
 * `takeUnreadable` gives the lines the source skipped since it was last asked (unusable lines of a
 * file): they count as skipped in the batch being read.
 */
export function createBatchReader(
  chunks: PreparedChunks,
  size: number,
  skips: Skips,
  signal?: AbortSignal,
  takeUnreadable: () => number = () => 0,
): BatchReader {
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
      const batch = await read();
      batch.skipped += takeUnreadable();
      return batch;
    },
  };

  async function read(): Promise<{ items: PreparedItem[]; skipped: number }> {
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
  }
}
