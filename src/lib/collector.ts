import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's memory reducer for this process, as an API process wants it (docs/search.md,
 * "Freshness"; docs/benchmarks.md, "Search freshness").
 *
 * The memory reducer starts whole-heap collections of its own a few seconds after a large
 * collection, when the process looks idle, to give memory back. In an API process that holds the
 * search index, the moment it picks is the middle of an index build in the worker thread (the
 * serving thread is quiet, the previous index just became garbage), and its final pause was the
 * one event-loop pause over 20 ms left in a rebuild. Without it, the garbage is collected by the
 * ordinary allocation-driven collections (the index's buffers are external memory, which V8 counts
 * towards its next collection), so memory peaks where it already did: two indexes while a rebuild
 * is swapped in (docs/deployment.md).
 *
 * Set at run time because Node.js does not accept the flag in NODE_OPTIONS; V8 reads it each time
 * it would start the reducer, so it holds from the next collection on (a process that turns it off
 * shows no `Mark-Compact (reduce)` in `--trace-gc`). No test covers it: when the reducer runs at
 * all depends on V8's idle heuristics, which no short test makes happen reliably;
 * bench/search-build-pauses.ts measures the pauses it caused.
 */
export function turnOffMemoryReducer(): void {
  setFlagsFromString('--no-memory-reducer');
}
