import type { RegistryExecutor } from '../../registry/store.ts';
import { findRunProgress, NO_RUNS_ASKED, readDataAsOf, readRunWatermark, type RunProgress, type RunsAsked } from './repo.ts';

/**
 * Follows the daily runs for an in-memory index of companies (the search index, and the match
 * index: src/modules/match/engine.ts; any other index built from `companies` can use it the same way). Companies change only through runs (daily
 * runs and on-demand imports, src/registry/daily/), and each committed batch of a run records the
 * companies it wrote (daily_run_changes), so a finished run can be applied to an index as a delta:
 *
 *   1. build the index from a snapshot and take `readIndexCursor` in the same snapshot;
 *   2. now and then (for each search, and on a timer) call `nextFollowStep(db, cursor)` (or run
 *      findRunProgress's query for `runsAskedOf(cursor)` inside a statement of your own, then
 *      `planFollowStep`: repo.ts findResultPagesCharging):
 *      - `current`: nothing finished since;
 *      - `changes`: re-read the companies `runIds` wrote (repo.ts readRunChangedRows, or
 *        readRunChangedCompanyIds), apply them, and keep `next` as the cursor;
 *      - `rebuild`: too much changed for a delta (or its change lists may be gone): build again.
 *
 * A run still in progress is waited for (its committed batches are applied when it finishes, all
 * at once); a failed run's committed batches are applied when it fails, and again (all of them)
 * when it is resumed and finishes. `dataAsOf` is the date of the latest completed daily run the
 * index reflects (imports are not days).
 */

export interface IndexCursor {
  /** Runs with an id from here on were not seen yet. */
  nextRunId: number;
  /** Runs to look at again: unfinished ones (`running`) and failed ones (`failed:<attempts>`) that may be resumed. */
  watch: ReadonlyMap<number, string>;
  dataAsOf: string | null;
}

export type FollowStep =
  | { kind: 'current' }
  | { kind: 'changes'; runIds: number[]; changed: number; next: IndexCursor }
  | { kind: 'rebuild'; reason: 'large' | 'expired'; changed: number };

/** The cursor of an index built from this transaction's snapshot (run it in the build's repeatable-read transaction). */
export async function readIndexCursor(trx: RegistryExecutor): Promise<IndexCursor> {
  const { nextId, unfinished } = await readRunWatermark(trx);
  const watch = new Map<number, string>();
  for (const r of unfinished) watch.set(r.id, r.status === 'running' ? 'running' : `${r.status}:${r.attempts}`);
  return { nextRunId: nextId, watch, dataAsOf: await readDataAsOf(trx) };
}

/** What an index at `cursor` has to do to reflect every run finished now (one small query). */
export async function nextFollowStep(db: RegistryExecutor, cursor: IndexCursor, options: { maxDelta: number }): Promise<FollowStep> {
  const runs = await findRunProgress(db, cursor.nextRunId, [...cursor.watch.keys()]);
  return planFollowStep(cursor, runs, options);
}

/** The runs nextFollowStep asks the database about for `cursor` (findRunProgress's arguments). */
export function runsAskedOf(cursor: IndexCursor): RunsAsked {
  return { fromId: cursor.nextRunId, watch: [...cursor.watch.keys()] };
}

/** One question covering several cursors' questions (each cursor then takes its own runs: runsOf). */
export function unionOfAsked(asked: readonly RunsAsked[]): RunsAsked {
  if (asked.length === 0) return NO_RUNS_ASKED;
  if (asked.length === 1) return asked[0]!;
  let fromId = Infinity;
  const watch = new Set<number>();
  for (const a of asked) {
    fromId = Math.min(fromId, a.fromId);
    for (const id of a.watch) watch.add(id);
  }
  return { fromId, watch: [...watch] };
}

/**
 * Of runs read for a wider question (unionOfAsked), the ones `cursor`'s own question selects: what
 * findRunProgress(runsAskedOf(cursor)) would have read in the same snapshot. (A completed run the
 * cursor neither watches nor is before would look new to planFollowStep.)
 */
export function runsOf(cursor: IndexCursor, runs: readonly RunProgress[]): RunProgress[] {
  return runs.filter((r) => r.id >= cursor.nextRunId || r.status !== 'completed' || cursor.watch.has(r.id));
}

/** nextFollowStep's decision, given the runs it read. */
export function planFollowStep(cursor: IndexCursor, runs: readonly RunProgress[], options: { maxDelta: number }): FollowStep {
  const watch = new Map(cursor.watch);
  let nextRunId = cursor.nextRunId;
  let dataAsOf = cursor.dataAsOf;
  const runIds: number[] = [];
  let changed = 0;
  let expired = false;
  let moved = false;
  for (const run of runs) {
    if (run.id + 1 > nextRunId) {
      nextRunId = run.id + 1;
      moved = true;
    }
    if (run.status === 'running') {
      if (watch.get(run.id) !== 'running') moved = true;
      watch.set(run.id, 'running');
      continue;
    }
    const key = `${run.status}:${run.attempts}`;
    if (watch.get(run.id) === key) continue;
    if (run.status === 'failed') watch.set(run.id, key);
    else watch.delete(run.id);
    moved = true;
    if (run.changes_expired) expired = true;
    changed += run.changed;
    if (run.changed > 0) runIds.push(run.id);
    if (run.status === 'completed' && run.kind === 'daily' && (dataAsOf === null || run.run_date > dataAsOf)) dataAsOf = run.run_date;
  }
  if (expired) return { kind: 'rebuild', reason: 'expired', changed };
  if (changed > options.maxDelta) return { kind: 'rebuild', reason: 'large', changed };
  if (!moved) return { kind: 'current' };
  return { kind: 'changes', runIds, changed, next: { nextRunId, watch, dataAsOf } };
}
