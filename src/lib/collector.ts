/** The node option that turns off V8's memory reducer, as an API process wants it (below). */
export const MEMORY_REDUCER_OFF = '--no-memory-reducer';

/** The node option that sizes V8's pool of helper threads to the machine: cores less one (below). */
export const V8_POOL_SIZED = '--v8-pool-size=0';

/** Both, in the order `npm start`, the `regwatch` command, the Dockerfile and deploy/compose.yaml pass them. */
export const API_NODE_OPTIONS = [MEMORY_REDUCER_OFF, V8_POOL_SIZED] as const;

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
 */
export function memoryReducerOff(execArgv: readonly string[] = process.execArgv): boolean {
  return execArgv.includes(MEMORY_REDUCER_OFF);
}

/**
 * Whether V8's helper threads are sized to the machine (`--v8-pool-size=0`: as many as its cores
 * less one, at least one) rather than Node.js's default of four.
 *
 * Those threads do the garbage collectors' background work for every thread of the process: an
 * index build's worker thread runs at the lowest CPU priority, but the collections of its heap
 * run on them at normal priority. On two cores, four of them busy with a build's collections beside
 * its PostgreSQL backend kept the serving thread waiting for a core for up to 14 ms at a time, and
 * a rebuild's longest event-loop gap with a search every 10 ms was 15-23 ms (once 88 ms) against
 * 8.5-16.5 ms with one (docs/benchmarks.md, "Search freshness"); request throughput did not change.
 * Node.js accepts this flag in NODE_OPTIONS too; any size an operator sets there or on the command
 * line counts as chosen.
 */
export function v8PoolSized(execArgv: readonly string[], nodeOptions: string): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => a.startsWith('--v8-pool-size='));
}

/** The API_NODE_OPTIONS a process started with `execArgv` and NODE_OPTIONS `nodeOptions` lacks (an API process logs them at start). */
export function missingApiNodeOptions(execArgv: readonly string[], nodeOptions: string): string[] {
  return [...(memoryReducerOff(execArgv) ? [] : [MEMORY_REDUCER_OFF]), ...(v8PoolSized(execArgv, nodeOptions) ? [] : [V8_POOL_SIZED])];
}
