import type { DailyRun } from '../store/daily-runs-repo.ts';

/** What a daily run reports when it ends: built from its row, and as the one line the CLI and the job log print. */

export interface DailyRunSummary {
  runId: string;
  date: string;
  source: string;
  sourceKey: string;
  /** The run had completed before: nothing was read or written. */
  alreadyCompleted: boolean;
  /** This attempt continued an interrupted run. */
  resumed: boolean;
  new: number;
  updated: number;
  deleted: number;
  events: number;
  processed: number;
  skipped: number;
  total: number;
  durationMs: number;
}

export function summarize(run: DailyRun, extra: { alreadyCompleted: boolean; resumed: boolean; durationMs: number }): DailyRunSummary {
  return {
    runId: run.id,
    date: run.run_date,
    source: run.source,
    sourceKey: run.source_key,
    alreadyCompleted: extra.alreadyCompleted,
    resumed: extra.resumed,
    new: run.new_count,
    updated: run.updated_count,
    deleted: run.deleted_count,
    events: run.events_count,
    processed: run.processed_count,
    skipped: run.skipped_count,
    total: run.total ?? 0,
    durationMs: extra.durationMs,
  };
}

export function formatSummary(s: DailyRunSummary): string {
  const note = s.alreadyCompleted ? ' (already completed: nothing added)' : s.resumed ? ' (resumed)' : '';
  return `daily ${s.date} ${s.sourceKey}: new=${s.new} updated=${s.updated} deleted=${s.deleted} events=${s.events} total=${s.total} skipped=${s.skipped}${note}`;
}
