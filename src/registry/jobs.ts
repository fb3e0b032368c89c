import type { Task } from 'graphile-worker';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import { watchedNips } from './vat-refresh.ts';
import { addJob, type JobModule } from '../jobs/queue.ts';
import { parseJobPayload } from '../jobs/payload.ts';
import { CronPayload, RegistryDailyPayload, TASKS } from '../jobs/tasks.ts';
import { addDays, isIsoDate, utcDate } from '../lib/dates.ts';
import { catchUpDays, sourceNameOf } from './source-days.ts';
import { MAX_BACKFILL_DAYS } from './sources/backfill.ts';
import { completedRunDays, markSourceScheduled, sourceRunSpans } from './store/source-runs-repo.ts';
import { runDaily, RunInProgressError } from './daily/run.ts';
import { formatSummary } from './daily/summary.ts';
import { resolveSource } from './sources/resolve.ts';
import type { RegistryExecutor } from './store/executor.ts';
import type { RegistrySourcesDeps } from './sources/index.ts';

/**
 * The scheduled daily run. The tick (UTC crontab) only fans out: per configured source, one
 * `registry.daily` job for the previous day and one for every earlier day it missed (failed, or
 * never ran) as far back as the source can serve it (docs/sources.md, "Catch-up"), each keyed by
 * (date, source) so a repeated tick queues nothing twice. Each source has its own named queue, so
 * its days run one after another, oldest first, while different sources run side by side (the
 * store's revision checks keep them from overwriting each other).
 */

// No dot in the tick's name: graphile-worker's crontab accepts only [_a-zA-Z0-9:/-] there.
export const DAILY_TICK_TASK = TASKS.registryDailyTick;
export const DAILY_TASK = TASKS.registryDaily;

/** 03:00 UTC: after midnight in Poland (CET/CEST), when the registries have published the day. */
export const DAILY_CRONTAB = `0 3 * * * ${DAILY_TICK_TASK} ?fill=2d&max=1`;

export interface RegistryJobDeps {
  config: Config;
  db: RegistryExecutor;
  logger: Logger;
  clock: Clock;
  /** Passed to the live connectors (e.g. `vatNipsToRefresh`, the NIPs the VAT list re-checks). */
  sourceDeps?: RegistrySourcesDeps;
}

/** The day a tick at `ts` covers: the previous UTC day, which is complete in Poland by 03:00 UTC. */
export function dayBefore(ts: Date): string {
  return new Date(ts.getTime() - 86_400_000).toISOString().slice(0, 10);
}

export function dailyJobKey(date: string, source: string): string {
  return `registry.daily:${date}:${source}`;
}

/** Queues one daily job per configured source for `date`; returns the sources queued. */
export async function enqueueDailyRuns(db: RegistryExecutor, sources: readonly string[], date: string): Promise<string[]> {
  for (const source of sources) await enqueueDailyRun(db, source, date, false);
  return [...sources];
}

/**
 * A day's job. A catch-up day replaces a job still waiting under its key (one that failed every
 * attempt, or waits out a long backoff): it runs now, with fresh attempts, in order with the rest.
 */
async function enqueueDailyRun(db: RegistryExecutor, source: string, date: string, catchUp: boolean, runAt?: Date): Promise<void> {
  await addJob(
    db,
    DAILY_TASK,
    { date, source },
    {
      jobKey: dailyJobKey(date, source),
      jobKeyMode: catchUp ? 'replace' : 'preserve_run_at',
      queueName: dailyQueueName(source),
      maxAttempts: 8,
      runAt,
    },
  );
}

/**
 * Queues, per source, its missed days oldest first and then `date`; returns the days queued per
 * source. The first tick for a source records the day it is watched from.
 */
export async function enqueueDailyRunsWithCatchUp(
  db: RegistryExecutor,
  sources: readonly string[],
  date: string,
  options: { today: string; catchUpDays: number },
): Promise<Record<string, string[]>> {
  const queued: Record<string, string[]> = {};
  for (const source of sources) {
    const name = sourceNameOf(source);
    await markSourceScheduled(db, name, date);
    const span = (await sourceRunSpans(db)).find((s) => s.source === name);
    const completed = (await completedRunDays(db, addDays(date, -options.catchUpDays), date, name)).get(name) ?? new Set<string>();
    const maxBackfillDays = (MAX_BACKFILL_DAYS as Record<string, number | null | undefined>)[name] ?? null;
    const days = catchUpDays({
      target: date,
      today: options.today,
      trackedFrom: span?.tracked_from ?? date,
      completedDays: completed,
      maxBackfillDays,
      catchUpDays: options.catchUpDays,
    });
    for (const day of days) await enqueueDailyRun(db, source, day, day !== date);
    queued[source] = days;
  }
  return queued;
}

function dailyQueueName(source: string): string {
  return `registry-daily-${source}`;
}

/**
 * The last-due job of the earlier days of `source` that will still run: one that failed and waits
 * out its backoff keeps its place in the queue, so a later day waits for it (a named queue holds
 * back its later jobs only while one runs). A day that failed every attempt holds nothing back.
 */
export async function earlierDayPending(db: RegistryExecutor, source: string, date: string): Promise<{ date: string; runAt: Date } | null> {
  const { rows } = await sql<{ date: string; run_at: Date }>`
    SELECT split_part(key, ':', 2) AS date, run_at FROM graphile_worker.jobs
    WHERE task_identifier = ${DAILY_TASK} AND queue_name = ${dailyQueueName(source)}
      AND key LIKE 'registry.daily:%' AND split_part(key, ':', 2) < ${date}
      AND attempts < max_attempts
    ORDER BY run_at DESC LIMIT 1`.execute(db);
  return rows[0] ? { date: rows[0].date, runAt: rows[0].run_at } : null;
}

export function createRegistryJobs(deps: RegistryJobDeps): JobModule {
  const sources = deps.config.registrySources;

  const tick: Task = async (payload) => {
    const ts = parseJobPayload(DAILY_TICK_TASK, CronPayload, payload ?? {})._cron?.ts;
    const at = ts ? new Date(ts) : deps.clock.now();
    const date = dayBefore(Number.isNaN(at.getTime()) ? deps.clock.now() : at);
    const queued = await enqueueDailyRunsWithCatchUp(deps.db, sources, date, {
      today: utcDate(deps.clock.now()),
      catchUpDays: deps.config.registryCatchUpDays,
    });
    deps.logger.info({ date, days: queued }, 'daily registry runs queued');
  };

  // helpers.abortSignal fires 5 s into the worker's graceful shutdown: the run stops at its next
  // batch (what it committed stays; the job's next attempt resumes from there), so a stop during a
  // long run releases the job in time instead of leaving it locked until the process is killed.
  const daily: Task = async (payload, helpers) => {
    const { date, source } = parseJobPayload(DAILY_TASK, RegistryDailyPayload, payload);
    if (!isIsoDate(date)) throw new Error(`${DAILY_TASK}: payload.date ${date} is not a calendar date`);
    // Days of a source run oldest first (docs/sources.md, "Catch-up"): a source that gives the state
    // as of a date would otherwise have an earlier day, retried after this one, roll it back. This
    // day is queued again behind the earlier one (its key moves to the new job, this one completes);
    // no attempt is spent on waiting.
    const earlier = await earlierDayPending(deps.db, source, date);
    if (earlier) {
      await enqueueDailyRun(deps.db, source, date, true, new Date(earlier.runAt.getTime() + 1000));
      deps.logger.info({ date, source, waits_for: earlier.date }, 'daily run waits for an earlier day of its source');
      return;
    }
    const resolved = await resolveSource(source, {
      config: deps.config,
      logger: deps.logger,
      deps: { logger: deps.logger, clock: deps.clock, vatNipsToRefresh: watchedNips(deps.db), ...deps.sourceDeps },
    });
    try {
      const summary = await runDaily(deps.db, {
        date,
        source: resolved.source,
        sourceKey: resolved.sourceKey,
        logger: deps.logger,
        signal: helpers.abortSignal,
      });
      deps.logger.info(
        {
          run_id: summary.runId,
          date,
          source,
          new: summary.new,
          updated: summary.updated,
          deleted: summary.deleted,
          events: summary.events,
        },
        formatSummary(summary),
      );
    } catch (e) {
      // Another process works on this run: it will finish it; this job has nothing to add.
      if (e instanceof RunInProgressError) {
        deps.logger.warn({ date, source }, e.message);
        return;
      }
      throw e;
    }
  };

  return {
    tasks: { [DAILY_TICK_TASK]: tick, [DAILY_TASK]: daily },
    crontab: sources.length > 0 ? [DAILY_CRONTAB] : [],
  };
}
