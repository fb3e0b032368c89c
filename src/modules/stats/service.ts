import type { RegistryExecutor } from '../../registry/store.ts';
import { completedRunDays, type RunDayRow } from './repo.ts';
import { addDays, isIsoDate } from '../../lib/dates.ts';

/**
 * Registry statistics (docs/api-contract.md, "Registry statistics"), computed from the completed daily runs: a run's
 * counters are committed with its rows, so they are exact without counting events again.
 */

export interface StatsData {
  new: number;
  updated: number;
  deleted: number;
  total: number;
}

export interface DayStatsBody {
  meta: { date: string; type: 'daily_snapshot'; source: string; description: string };
  data: StatsData;
}

export interface RangeStatsBody {
  meta: { from_date: string; to_date: string; source: string; description: string };
  data: StatsData;
}

const RANGE_DAYS = 30;
const FIRST_DAY = '0001-01-01';

export { isIsoDate };

const SOURCE_LABELS: Record<string, string> = {
  krs: 'KRS (National Court Register)',
  bir: 'GUS REGON (BIR)',
  ceidg: 'CEIDG',
  vat: 'VAT whitelist',
  synthetic: 'synthetic demo registry',
  file: 'snapshot file import',
};

function sourceLabel(sources: Iterable<string>): string {
  const names = [...new Set(sources)].sort();
  return names.map((s) => SOURCE_LABELS[s] ?? s).join(', ');
}

/** Null when no daily run completed on that day (404). The date must be a valid YYYY-MM-DD. */
export async function getDayStats(db: RegistryExecutor, date: string): Promise<DayStatsBody | null> {
  if (!isIsoDate(date)) throw new RangeError(`Not a date (YYYY-MM-DD): ${date}`);
  const [day] = await completedRunDays(db, date, date);
  if (!day) return null;
  return {
    meta: {
      date: day.run_date,
      type: 'daily_snapshot',
      source: sourceLabel(day.sources),
      description: `Daily change detection of ${day.run_date}: companies first seen (new), companies with at least one change event (updated), companies that became deleted (deleted), and companies known at the end of the day (total).`,
    },
    data: dataOf(day),
  };
}

/**
 * The 30 days ending at `date`, clamped to the days that have completed runs; null when none
 * has. Counts are summed; `total` is that of the last day.
 */
export async function getRangeStats(db: RegistryExecutor, date: string): Promise<RangeStatsBody | null> {
  if (!isIsoDate(date)) throw new RangeError(`Not a date (YYYY-MM-DD): ${date}`);
  // The window stops at the calendar's first day (0001-01-01): PostgreSQL has no year 0.
  const from = addDays(date, -(RANGE_DAYS - 1));
  const days = await completedRunDays(db, from < FIRST_DAY ? FIRST_DAY : from, date);
  if (days.length === 0) return null;
  const first = days[0]!;
  const last = days[days.length - 1]!;
  const sum = (pick: (d: RunDayRow) => number) => days.reduce((n, d) => n + pick(d), 0);
  return {
    meta: {
      from_date: first.run_date,
      to_date: last.run_date,
      source: sourceLabel(days.flatMap((d) => d.sources)),
      description: `Registry changes over the ${RANGE_DAYS} days ending ${date}, from the first to the last day with a completed daily run: companies first seen (new), companies with at least one change event (updated, once per day), companies that became deleted (deleted), and companies known at the end of ${last.run_date} (total).`,
    },
    data: { new: sum((d) => d.new), updated: sum((d) => d.updated), deleted: sum((d) => d.deleted), total: last.total },
  };
}

function dataOf(day: RunDayRow): StatsData {
  return { new: day.new, updated: day.updated, deleted: day.deleted, total: day.total };
}
