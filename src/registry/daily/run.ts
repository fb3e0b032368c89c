import { isIsoDate } from '../../lib/dates.ts';
import type { RegistryExecutor } from '../store/executor.ts';
import { ensureEventsPartition } from '../store/events-repo.ts';
import { beginRun, completeRun, failRun, pruneRunChanges } from '../store/daily-runs-repo.ts';
import { tryLockRun, unlockRun } from '../store/locks.ts';
import type { RunDailyOptions } from './options.ts';
import { processStream } from './pipeline.ts';
import { summarize, type DailyRunSummary } from './summary.ts';

/**
 * The daily run: a source's snapshots for one date, in batches. Per batch, one query loads the
 * stored companies, merge and diff run in memory, and one short transaction writes companies,
 * identifiers, events and the run's counters together. docs/registry.md explains why this is
 * idempotent (a completed run is never applied twice; a replayed snapshot is a no-op) and
 * resumable (every committed batch is complete, counters included).
 */

export class RunInProgressError extends Error {
  constructor(date: string, sourceKey: string) {
    super(`A daily run for ${date} from ${sourceKey} is already in progress in another process.`);
    this.name = 'RunInProgressError';
  }
}

export async function runDaily(db: RegistryExecutor, options: RunDailyOptions): Promise<DailyRunSummary> {
  const { date, source } = options;
  if (!isIsoDate(date)) throw new RangeError(`Not a date (YYYY-MM-DD): ${date}`);
  const sourceKey = options.sourceKey ?? source.name;
  const now = options.now ?? Date.now;
  const started = now();
  await ensureEventsPartition(db, date);

  // The session lock lives on one connection for the whole run, so it is released if the process dies.
  return db.connection().execute(async (conn) => {
    if (!(await tryLockRun(conn, date, sourceKey))) throw new RunInProgressError(date, sourceKey);
    try {
      const { run, resumed } = await beginRun(conn, date, source.name, sourceKey, options.importIdentifier ?? null);
      if (run.status === 'completed') return summarize(run, { alreadyCompleted: true, resumed: false, durationMs: now() - started });
      try {
        await processStream(db, run, options, now);
      } catch (e) {
        await failRun(db, run.id, e instanceof Error ? e.message : String(e)).catch(() => {});
        throw e;
      }
      const done = await completeRun(db, run.id);
      await pruneRunChanges(db).catch((e: unknown) => {
        options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'old run change lists not pruned');
      });
      return summarize(done, { alreadyCompleted: false, resumed, durationMs: now() - started });
    } finally {
      await unlockRun(conn, date, sourceKey).catch(() => {});
    }
  });
}
