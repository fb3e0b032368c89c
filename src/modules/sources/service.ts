import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { addDays, utcDate } from '../../lib/dates.ts';
import { SOURCE_NAMES } from '../../registry/model.ts';
import { GAP_WINDOW_DAYS, sourceCoverage, sourceNameOf } from '../../registry/source-days.ts';
import type { RegistryExecutor } from '../../registry/store/executor.ts';
import { companiesPerSource, completedRunDays, latestCompletion, latestSourceRuns, sourceRunSpans } from '../../registry/store/source-runs-repo.ts';
import type { SourceStatus } from './schema.ts';

/**
 * The freshness of each registry source (docs/sources.md): what the scheduler runs, how far it
 * got, which days it owes. Read from the daily runs at request time, so every API process
 * answers the same; only the per-source company counts (a pass over every company) are kept,
 * until the next run completes.
 */

/** Always listed, configured or not: an integrator asks about these by name. */
const ALWAYS_LISTED = new Set(['krs', 'bir', 'ceidg', 'vat']);

export interface SourcesService {
  list(): Promise<SourceStatus[]>;
}

export function createSourcesService(deps: { db: RegistryExecutor; config: Pick<Config, 'registrySources'>; clock: Clock }): SourcesService {
  const configured = new Set(deps.config.registrySources.map(sourceNameOf));
  let counts: { key: string; value: Promise<Map<string, number>> } | null = null;

  /** Profiles change only when a run (daily or import) completes: counted again after one did. */
  async function companyCounts(): Promise<Map<string, number>> {
    const key = await latestCompletion(deps.db);
    if (counts?.key !== key) {
      const value = companiesPerSource(deps.db);
      const entry = { key, value };
      counts = entry;
      value.catch(() => { if (counts === entry) counts = null; });
    }
    return counts.value;
  }

  return {
    async list() {
      const now = deps.clock.now();
      // The window ends at the last due day, or at a later day that has a run, today at the latest.
      const today = utcDate(now);
      const [spans, completed, runs, companies] = await Promise.all([
        sourceRunSpans(deps.db),
        completedRunDays(deps.db, addDays(today, -(GAP_WINDOW_DAYS + 1)), today),
        latestSourceRuns(deps.db),
        companyCounts(),
      ]);
      const spanOf = new Map(spans.map((s) => [s.source, s]));
      const runOf = new Map(runs.map((r) => [r.source, r]));
      const listed = SOURCE_NAMES.filter((name) => ALWAYS_LISTED.has(name) || configured.has(name) || spanOf.has(name));
      return listed.map((source) => {
        const span = spanOf.get(source);
        const run = runOf.get(source);
        const coverage = sourceCoverage({
          configured: configured.has(source),
          now,
          trackedFrom: span?.tracked_from ?? null,
          completedDays: completed.get(source) ?? new Set(),
          lastRunStatus: run?.status ?? null,
          latestRunDate: span?.last_run_date ?? null,
        });
        return {
          source,
          configured: configured.has(source),
          health: coverage.health,
          last_completed_date: span?.last_completed_date ?? null,
          last_run: run
            ? {
                date: run.date, status: run.status, started_at: run.started_at.toISOString(), finished_at: run.finished_at?.toISOString() ?? null,
                new: run.new, updated: run.updated, deleted: run.deleted, events: run.events,
              }
            : null,
          gaps: coverage.gaps,
          companies: companies.get(source) ?? 0,
        };
      });
    },
  };
}
