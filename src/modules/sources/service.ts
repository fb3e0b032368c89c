import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import { addDays, utcDate } from '../../lib/dates.ts';
import { SOURCE_NAMES } from '../../registry/model.ts';
import { GAP_WINDOW_DAYS, sourceCoverage, sourceNameOf } from '../../registry/source-days.ts';
import type { RegistryExecutor } from '../../registry/store/executor.ts';
import {
  companiesPerSource,
  completedRunDays,
  latestSourceRuns,
  markSourceScheduled,
  runMarks,
  sourceRunSpans,
} from '../../registry/store/source-runs-repo.ts';
import type { SourceStatus } from './schema.ts';

/**
 * The freshness of each registry source (docs/sources.md): what the scheduler runs, how far it
 * got, which days it owes. Read from the daily runs at request time, so every API process
 * answers the same; only the per-source company counts (a pass over every company) are kept,
 * see companyCounts.
 */

/** How long the company counts may leave out on-demand imports. */
const IMPORTS_STALE_MS = 60_000;
/** How long a request waits for a recount before it answers the previous figures. */
const RECOUNT_WAIT_MS = 250;

/** Always listed, configured or not: an integrator asks about these by name. */
const ALWAYS_LISTED = new Set(['krs', 'bir', 'ceidg', 'vat']);

export interface SourcesService {
  list(): Promise<SourceStatus[]>;
  /**
   * Records today as the day each configured source is watched from, unless it is watched from
   * an earlier day already (a tick or a run): called when a process starts serving, so that a
   * source configured where no worker ever runs its days becomes `down` after three due days
   * instead of `ok` for ever.
   */
  markConfigured(): Promise<void>;
}

export function createSourcesService(deps: {
  db: RegistryExecutor;
  config: Pick<Config, 'registrySources'>;
  clock: Clock;
}): SourcesService {
  const configured = new Set(deps.config.registrySources.map(sourceNameOf));
  let counts: { daily: string; any: string; at: number; value: Map<string, number> } | null = null;
  let counting: Promise<void> | null = null;

  /**
   * Counted again once a daily run completed, or a minute after an on-demand import added a
   * company. A request waits for a recount at most a moment: a large registry's recount finishes
   * in the background and the previous figures are answered meanwhile.
   */
  async function companyCounts(): Promise<Map<string, number>> {
    const marks = await runMarks(deps.db);
    const at = deps.clock.now().getTime();
    const stale = !counts || counts.daily !== marks.daily || (counts.any !== marks.any && Math.abs(at - counts.at) > IMPORTS_STALE_MS);
    if (stale && !counting) {
      counting = companiesPerSource(deps.db)
        .then((value) => {
          counts = { ...marks, at, value };
        })
        .finally(() => {
          counting = null;
        });
    }
    if (!counts) await counting;
    else if (counting)
      await Promise.race([counting.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, RECOUNT_WAIT_MS).unref())]);
    return counts!.value;
  }

  return {
    async markConfigured() {
      const today = utcDate(deps.clock.now());
      for (const source of configured) await markSourceScheduled(deps.db, source, today);
    },

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
          runningDate: run?.status === 'running' ? run.date : null,
        });
        return {
          source,
          configured: configured.has(source),
          health: coverage.health,
          last_completed_date: span?.last_completed_date ?? null,
          last_run: run
            ? {
                date: run.date,
                status: run.status,
                started_at: run.started_at.toISOString(),
                finished_at: run.finished_at?.toISOString() ?? null,
                new: run.new,
                updated: run.updated,
                deleted: run.deleted,
                events: run.events,
              }
            : null,
          gaps: coverage.gaps,
          companies: companies.get(source) ?? 0,
        };
      });
    },
  };
}
