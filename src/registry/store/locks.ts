import { sql } from 'kysely';
import type { RegistryExecutor } from './executor.ts';
import { advisoryLockHeldSql } from '../../db/advisory-locks.ts';

/** The registry's advisory locks: the events writer's and a daily run's. */

/**
 * Every transaction that inserts events takes this transaction-level advisory lock first, so at
 * most one event-writing transaction is open at a time and event ids become visible in id order
 * (a feed polling `id > after_id` never skips an id that commits late).
 */
export const EVENTS_WRITER_LOCK = 7_307_900_001;

/** Class id of the session-level lock that keeps two processes off the same (date, source) run. */
export const RUN_LOCK_CLASS = 73_079;

/**
 * SQL true while the process of the `daily_runs` row aliased `r` is alive: some session still holds
 * the run's session lock (tryLockRun), which PostgreSQL releases when that session ends.
 */
export const RUN_OWNER_ALIVE = sql.raw(advisoryLockHeldSql(`${RUN_LOCK_CLASS}::int`, "hashtext(r.run_date::text || '|' || r.source_key)"));

export async function lockEventsWriter(trx: RegistryExecutor): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${EVENTS_WRITER_LOCK}::bigint)`.execute(trx);
}

/** Session-level lock so one process at a time works on a run; released with the connection. */
export async function tryLockRun(conn: RegistryExecutor, date: string, sourceKey: string): Promise<boolean> {
  const { rows } = await sql<{
    ok: boolean;
  }>`SELECT pg_try_advisory_lock(${RUN_LOCK_CLASS}::int, hashtext(${`${date}|${sourceKey}`})) AS ok`.execute(conn);
  return rows[0]!.ok;
}

export async function unlockRun(conn: RegistryExecutor, date: string, sourceKey: string): Promise<void> {
  await sql`SELECT pg_advisory_unlock(${RUN_LOCK_CLASS}::int, hashtext(${`${date}|${sourceKey}`}))`.execute(conn);
}
