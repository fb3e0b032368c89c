/**
 * The daily run, for code outside src/registry: one import for what it uses. The run's parts have
 * their own files under daily/ (run.ts its lifecycle, reader.ts, planner.ts, writer.ts,
 * pipeline.ts, full-export-heuristics.ts); docs/registry.md describes how a run flows through them.
 */
export { runDaily, RunInProgressError } from './daily/run.ts';
export type { DailyProgress, RunDailyOptions } from './daily/options.ts';
export { formatSummary, type DailyRunSummary } from './daily/summary.ts';
export { MAX_FAILURES_IN_A_ROW } from './daily/skips.ts';
export { estimateLines, isFullExport, WORKER_MIN_FILE_BYTES } from './daily/full-export-heuristics.ts';
export { prepareSnapshot } from './prepare.ts';
