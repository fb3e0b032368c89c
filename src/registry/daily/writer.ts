import { sql } from 'kysely';
import type { PreparedItem } from '../prepare.ts';
import type { RegistryExecutor } from '../store/executor.ts';
import {
  copyCompanies,
  deleteCompanies,
  insertCompanies,
  insertIdentifiers,
  updateCompanies,
  updateFingerprints,
} from '../store/companies-repo.ts';
import { poolOf } from '../../db/database.ts';
import { transactionClient } from '../../db/pinned-connection.ts';
import { insertEvents, type NewEventRow } from '../store/events-repo.ts';
import { addRunCounters, recordRunChanges, type RunCounters } from '../store/daily-runs-repo.ts';
import { lockEventsWriter } from '../store/locks.ts';
import type { BatchPlan } from './planner.ts';

/**
 * Commits a planned batch in one short transaction: companies, identifiers, events and the run's
 * counters together (docs/registry.md), so every committed batch is complete.
 */

export interface BatchOutcome {
  counters: RunCounters;
  /** Lines planned as new whose company turned out to exist (see planBatch's assumeNew). */
  notNew: number;
  deferred: PreparedItem[];
}

export async function writeBatch(
  db: RegistryExecutor,
  runId: string | null,
  sourceName: string,
  date: string,
  plan: BatchPlan,
  processedItems: number,
  /**
   * Write the batch's new companies and identifiers with binary COPY (copyCompanies) when `db`
   * is createDatabase's (the transaction's client can be found); otherwise, or when false,
   * INSERT. The pipeline sets it for a first load's batches (RunDailyOptions.copyRows).
   */
  copyRows = false,
): Promise<BatchOutcome> {
  return db.transaction().execute(async (trx) => {
    const copyClient = copyRows && plan.newRows.length > 0 ? await transactionClient(poolOf(db), trx) : undefined;
    if (copyClient !== undefined) await copyCompanies(trx, copyClient, sourceName, date, plan.newRows);
    else await insertCompanies(trx, sourceName, date, plan.newRows);
    const written = await updateCompanies(
      trx,
      sourceName,
      plan.updates.map((u) => u.row),
    );
    const applied = plan.updates.filter((u) => written.has(u.row.id));
    const conflicts = await insertIdentifiers(trx, [...plan.newIdentifiers, ...applied.flatMap((u) => u.newIdentifiers)], copyClient);

    // A new company whose identifier another company took meanwhile is not new: it is retried,
    // and the retry's lookup finds that company.
    const newIds = new Set(plan.newRows.map((r) => r.id));
    const lostNew = new Set(conflicts.filter((c) => newIds.has(c.companyId)).map((c) => c.companyId));
    await deleteCompanies(trx, [...lostNew]);
    await updateFingerprints(trx, sourceName, plan.fingerprintOnly);

    const events: NewEventRow[] = [];
    for (const u of applied) for (const e of u.events) events.push({ ...e, companyId: u.row.id });
    let inserted = 0;
    if (events.length > 0) {
      await lockEventsWriter(trx);
      inserted = await insertEvents(trx, date, runId, events);
    } else {
      // A batch without events commits without waiting for its WAL to reach the disk
      // (docs/registry.md, "Durability of a batch"): should PostgreSQL itself crash in the next
      // fraction of a second, the batch is lost whole, its counters with it, and the run's
      // resumption writes it again. Nobody can have relied on it: anything committed later
      // (the run's completion, a watchlist add) flushes the WAL up to itself, this batch
      // included. A batch with events waits, as every other writer does, because a feed may
      // hand its events out at once.
      await sql`SET LOCAL synchronous_commit = off`.execute(trx);
    }

    const deferred = [
      ...plan.deferred,
      ...plan.updates.filter((u) => !written.has(u.row.id)).map((u) => u.item),
      ...plan.newItems.filter((_, i) => lostNew.has(plan.newRows[i]!.id)),
    ];
    const counters: RunCounters = {
      new: plan.newRows.length - lostNew.size,
      updated: applied.filter((u) => u.countsAsUpdated).length,
      deleted: applied.filter((u) => u.becameDeleted).length,
      events: inserted,
      processed: processedItems - deferred.length,
      skipped: plan.skipped,
    };
    if (runId !== null) {
      await addRunCounters(trx, runId, counters);
      await recordRunChanges(trx, runId, [
        ...plan.newRows.filter((r) => !lostNew.has(r.id)).map((r) => r.id),
        ...applied.map((u) => u.row.id),
      ]);
    }
    return { counters, deferred, notNew: lostNew.size };
  });
}
