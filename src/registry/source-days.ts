import { addDays, utcDate } from '../lib/dates.ts';

/**
 * Which days a source owes, and how healthy that makes it (docs/sources.md). Pure: the caller
 * reads the runs and the clock. A day D is due once its scheduled run (03:00 UTC on D+1) has had
 * three hours to finish; until then its absence is not a gap, as a status page does not report an
 * outage for a job whose time has not come, unless a run for it (or a later day) was already
 * made: a day whose run failed is missing at once. A source is watched from the day the scheduler first
 * queued it or its first daily run, whichever is earlier: a source added today owes nothing
 * before that, so it starts `ok` rather than 30 days behind.
 */

/** `gaps` covers the 30 days ending at the latest due day. */
export const GAP_WINDOW_DAYS = 30;
/** A gap this recent makes the source `degraded`. */
export const DEGRADED_WINDOW_DAYS = 7;
/** This many due days in a row without a completed run make a configured source `down`. */
export const DOWN_AFTER_DAYS = 3;
/** D is due 30 hours after it began: the 03:00 UTC tick of D+1 plus three hours to run. */
export const DAY_DUE_AFTER_HOURS = 30;

/** The name a source spec's runs are recorded under: `synthetic:7` runs as `synthetic`, `file:PATH` as `file`. */
export function sourceNameOf(spec: string): string {
  return spec.startsWith('file:') ? 'file' : spec.split(':')[0]!.trim();
}

export type SourceHealth = 'ok' | 'degraded' | 'down' | 'unconfigured';
export type RunStatus = 'running' | 'completed' | 'failed';

/** The latest day whose run is due at `now`. */
export function lastDueDay(now: Date): string {
  return utcDate(new Date(now.getTime() - DAY_DUE_AFTER_HOURS * 3_600_000));
}

/** Every day from `from` to `to`, inclusive, oldest first. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) days.push(d);
  return days;
}

function latest(a: string, b: string): string {
  return a > b ? a : b;
}

export interface SourceCoverageInput {
  configured: boolean;
  now: Date;
  /** The first day the source is watched from (see above); null: it never was. */
  trackedFrom: string | null;
  /** Days with a completed daily run (at least those of the gap window). */
  completedDays: ReadonlySet<string>;
  /** The status of the source's most recent run, if any. */
  lastRunStatus: RunStatus | null;
  /** The latest day the source has a daily run for, whatever its status (null: none). */
  latestRunDate: string | null;
  /** The day of the source's run in progress, if its most recent run is still running. */
  runningDate?: string | null;
}

export interface SourceCoverage {
  health: SourceHealth;
  /** Due days of the last 30 without a completed run, oldest first (configured sources only). */
  gaps: string[];
}

export function sourceCoverage(input: SourceCoverageInput): SourceCoverage {
  if (!input.configured) return { health: 'unconfigured', gaps: [] };
  const today = utcDate(input.now);
  let lastDue = lastDueDay(input.now);
  // A day whose run is still under way (the nightly run, from 03:00) is neither done nor missing:
  // it counts once it is due, or once its run has ended.
  const latestRun = input.latestRunDate === input.runningDate ? null : input.latestRunDate;
  if (latestRun !== null && latestRun > lastDue) lastDue = latestRun < today ? latestRun : today;
  if (input.trackedFrom === null || input.trackedFrom > lastDue)
    return { health: input.lastRunStatus === 'failed' ? 'degraded' : 'ok', gaps: [] };
  const from = latest(input.trackedFrom, addDays(lastDue, -(GAP_WINDOW_DAYS - 1)));
  const gaps = daysBetween(from, lastDue).filter((d) => !input.completedDays.has(d));
  const downFrom = addDays(lastDue, -(DOWN_AFTER_DAYS - 1));
  if (input.trackedFrom <= downFrom && daysBetween(downFrom, lastDue).every((d) => !input.completedDays.has(d)))
    return { health: 'down', gaps };
  const degradedFrom = addDays(lastDue, -(DEGRADED_WINDOW_DAYS - 1));
  if (input.lastRunStatus === 'failed' || gaps.some((d) => d >= degradedFrom)) return { health: 'degraded', gaps };
  return { health: 'ok', gaps };
}

export interface CatchUpInput {
  /** The day the tick is for (the day before the tick). */
  target: string;
  /** Today (UTC), which the sources' backfill limits count from. */
  today: string;
  trackedFrom: string | null;
  completedDays: ReadonlySet<string>;
  /** How many days before today the source can still serve a day; null: any day. */
  maxBackfillDays: number | null;
  /** How many days before the target the scheduler looks back at all (REGISTRY_CATCH_UP_DAYS). */
  catchUpDays: number;
}

/**
 * The days a tick queues for one source, oldest first: every day since the source is watched that
 * has no completed run, as far back as the source can serve and the catch-up window reaches, then
 * the tick's own day. A day beyond those limits is left alone and stays a gap.
 */
export function catchUpDays(input: CatchUpInput): string[] {
  let from = addDays(input.target, -Math.max(0, input.catchUpDays));
  if (input.trackedFrom !== null) from = latest(from, input.trackedFrom);
  else from = input.target;
  if (input.maxBackfillDays !== null) from = latest(from, addDays(input.today, -input.maxBackfillDays));
  const days = from <= input.target ? daysBetween(from, addDays(input.target, -1)).filter((d) => !input.completedDays.has(d)) : [];
  return input.completedDays.has(input.target) ? days : [...days, input.target];
}
