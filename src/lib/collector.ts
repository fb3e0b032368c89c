/** The node option that turns off V8's memory reducer, as an API process wants it (below). */
export const MEMORY_REDUCER_OFF = '--no-memory-reducer';

/**
 * Whether this process was started with V8's memory reducer off (docs/deployment.md; docs/benchmarks.md,
 * "Search freshness").
 *
 * The memory reducer starts whole-heap collections of its own about 8 seconds after a large
 * collection, when the process looks idle, to give memory back. In an API process that holds the
 * search index, the moment it picks is the middle of an index build in the worker thread (the
 * serving thread is quiet, the previous index just became garbage), and its pause (about 20 ms of
 * the serving thread's CPU) was the one over 20 ms left in a rebuild. Without it, the garbage is
 * collected by the ordinary allocation-driven collections (the index's buffers are external
 * memory, which V8 counts towards its next collection), so memory peaks where it already did: two
 * indexes while a rebuild is swapped in.
 *
 * Only the command line can turn it off: Node.js refuses the flag in NODE_OPTIONS, and V8 decides
 * whether a heap has a memory reducer when it creates the heap, so `v8.setFlagsFromString` at run
 * time changes nothing for the main thread (tried: the `Mark-Compact (reduce)` collections go on).
 * `npm start`, the `regwatch` command, the Dockerfile and deploy/compose.yaml pass it.
 */
export function memoryReducerOff(execArgv: readonly string[] = process.execArgv): boolean {
  return execArgv.includes(MEMORY_REDUCER_OFF);
}
