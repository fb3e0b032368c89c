import type { Task } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { JobModule } from '../../jobs/queue.ts';
import { parseJobPayload } from '../../jobs/payload.ts';
import { WatchlistAddPayload } from '../../jobs/tasks.ts';
import { ImportUnavailableError, type ImportCompany } from '../../registry/import.ts';
import {
  claimQueuedItems,
  findCompanyIds,
  findRequestById,
  listRequestItems,
  settleItems,
  watchCompanies,
  type Settlement,
} from './repo.ts';
import { completeSettledRequest, WATCH_ADD_TASK } from './service.ts';

export interface WatchlistJobDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  /** The on-demand import from the live sources (REGISTRY_SOURCES). */
  importCompany: ImportCompany;
}

export interface SettleOptions {
  /** The job's last attempt: a registry that still cannot be asked counts as "not found" (and refunded). */
  finalAttempt?: boolean;
}

/**
 * Settles a watchlist request: known companies are watched at once (one transaction), unknown
 * ones go through the on-demand import one by one, each settled in its own short transaction, so
 * a run that dies midway keeps what it settled and the next run carries on with the rest. When
 * no item is left queued, one transaction completes the request, refunds the items charged but
 * not watched (idempotent by reference) and queues the confirmation mail: a request completes,
 * refunds and mails exactly once, however often it runs.
 */
export async function settleWatchRequest(
  deps: WatchlistJobDeps,
  requestId: string,
  options: SettleOptions = {},
): Promise<'completed' | 'already_completed' | 'missing'> {
  const { db, clock, logger } = deps;
  const request = await findRequestById(db, requestId);
  if (!request) return 'missing';
  if (request.status === 'completed') return 'already_completed';
  const type = request.identifier_type;

  const pending = (await listRequestItems(db, requestId)).filter((i) => i.status === 'queued');
  const known = await findCompanyIds(
    db,
    type,
    pending.map((i) => i.identifier_value),
  );
  const settleWatched = async (wanted: { position: number; companyId: string }[]) => {
    await db.transaction().execute(async (trx) => {
      // Only items still queued once locked: a removal may have cancelled some meanwhile.
      const open = await claimQueuedItems(
        trx,
        requestId,
        wanted.map((i) => i.position),
      );
      const items = wanted.filter((i) => open.has(i.position));
      if (items.length === 0) return;
      // Watched from when the add was accepted, not when its job ran: an add at 23:59 whose job
      // runs after midnight still watches from its own day.
      const started = await watchCompanies(
        trx,
        request.account_id,
        [...new Set(items.map((i) => i.companyId))],
        request.created_at,
        clock.now(),
      );
      // A company this request did not start watching was on the list already (another value
      // naming it, or another request): a no-op, so it is refunded like one never found.
      const claimed = new Set<string>();
      const settlements: Settlement[] = items.map((i) => {
        const first = started.has(i.companyId) && !claimed.has(i.companyId);
        claimed.add(i.companyId);
        return { position: i.position, status: first ? 'watched' : 'already_watched', companyId: i.companyId };
      });
      await settleItems(trx, requestId, settlements, clock.now());
    });
  };

  const atOnce = pending
    .filter((i) => known.has(i.identifier_value))
    .map((i) => ({ position: i.position, companyId: known.get(i.identifier_value)! }));
  if (atOnce.length > 0) await settleWatched(atOnce);

  for (const item of pending.filter((i) => !known.has(i.identifier_value))) {
    // Removed meanwhile: no registry needs asking. (Outside a transaction this only reads the
    // item's status; settleWatched locks it again before watching.)
    if ((await claimQueuedItems(db, requestId, [item.position])).size === 0) continue;
    const identifier = { type, value: item.identifier_value };
    let result: { found: boolean; companyId?: string };
    try {
      result = await deps.importCompany(identifier);
    } catch (e) {
      if (!(e instanceof ImportUnavailableError) || !options.finalAttempt) throw e;
      logger.warn(
        { request_id: request.request_ref, identifier },
        'watchlist add: the registries could not be asked on the last attempt; the identifier counts as not found',
      );
      result = { found: false };
    }
    const companyId = result.found
      ? (result.companyId ?? (await findCompanyIds(db, type, [item.identifier_value])).get(item.identifier_value))
      : undefined;
    if (companyId) await settleWatched([{ position: item.position, companyId }]);
    else
      await db
        .transaction()
        .execute((trx) => settleItems(trx, requestId, [{ position: item.position, status: 'not_found', companyId: null }], clock.now()));
  }

  const completed = await db.transaction().execute((trx) => completeSettledRequest(trx, request, clock.now()));
  return completed ? 'completed' : 'already_completed';
}

/** `watchlist.add {request_id}`: one job per add request (job key per request), safe to run twice. */
export function createWatchlistJobs(deps: WatchlistJobDeps): JobModule {
  const add: Task = async (payload, helpers) => {
    const { request_id: id } = parseJobPayload(WATCH_ADD_TASK, WatchlistAddPayload, payload);
    const finalAttempt = helpers.job.attempts >= helpers.job.max_attempts;
    const outcome = await settleWatchRequest(deps, String(id), { finalAttempt });
    if (outcome === 'missing') deps.logger.warn({ request_id: id }, 'watchlist add: request not found (account deleted?)');
  };
  return { tasks: { [WATCH_ADD_TASK]: add } };
}
