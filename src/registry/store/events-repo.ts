import { sql } from 'kysely';
import type { DetectedEvent } from '../model.ts';
import type { RegistryExecutor } from './executor.ts';
import { column } from './batch-column.ts';

/** Data access of events: their monthly partitions, the batch insert of a daily run, a company's list. */

export interface NewEventRow extends DetectedEvent {
  companyId: string;
}

/** Creates the monthly partition that holds `date` (and is a no-op when it exists). */
export async function ensureEventsPartition(db: RegistryExecutor, date: string): Promise<string> {
  const { rows } = await sql<{ part: string }>`SELECT ensure_events_partition(${date}::date) AS part`.execute(db);
  return rows[0]!.part;
}

/**
 * Inserts events in the given order (so ids follow it), leaving out those another run of the
 * day recorded already; returns how many were inserted. Call inside a transaction that holds
 * EVENTS_WRITER_LOCK.
 */
export async function insertEvents(
  trx: RegistryExecutor,
  eventDate: string,
  runId: string | null,
  events: readonly NewEventRow[],
): Promise<number> {
  if (events.length === 0) return 0;
  const result = await sql`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    SELECT u.company_id, ${eventDate}::date, u.event_type, u.old_value, u.new_value, u.severity, ${runId}::bigint
    FROM unnest(${column(
      events.map((e) => e.companyId),
      'bigint',
    )}, ${events.map((e) => e.event_type)}::event_type[],
      ${column(
        events.map((e) => e.old_value),
        'text',
      )}, ${column(
        events.map((e) => e.new_value),
        'text',
      )},
      ${events.map((e) => e.severity)}::event_severity[]) WITH ORDINALITY AS u(company_id, event_type, old_value, new_value, severity, n)
    -- The same change seen in two profiles of a company is one event (DECISIONS 5): another
    -- source's run of the same day may have recorded it already. Probed only when such a run
    -- exists (the first condition is evaluated once), so a day of one source pays nothing.
    WHERE NOT (
      EXISTS (SELECT 1 FROM daily_runs r WHERE r.run_date = ${eventDate}::date AND r.id IS DISTINCT FROM ${runId}::bigint)
      AND EXISTS (
        SELECT 1 FROM events x WHERE x.company_id = u.company_id AND x.event_date = ${eventDate}::date
          AND x.event_type = u.event_type AND x.old_value IS NOT DISTINCT FROM u.old_value AND x.new_value IS NOT DISTINCT FROM u.new_value))
    ORDER BY u.n`.execute(trx);
  return Number(result.numAffectedRows ?? events.length);
}

export interface StoredEvent {
  id: string;
  company_id: string;
  event_type: string;
  old_value: string | null;
  new_value: string | null;
  event_date: string;
  severity: string;
  run_id: string | null;
}

/** A company's events, newest first (event_date, then id). */
export async function listCompanyEvents(
  db: RegistryExecutor,
  companyId: string,
  options: { limit?: number; offset?: number } = {},
): Promise<StoredEvent[]> {
  const { rows } = await sql<StoredEvent>`
    SELECT id, company_id, event_type, old_value, new_value, event_date::text AS event_date, severity, run_id
    FROM events WHERE company_id = ${companyId}
    ORDER BY event_date DESC, id DESC
    LIMIT ${options.limit ?? 100} OFFSET ${options.offset ?? 0}`.execute(db);
  return rows;
}
