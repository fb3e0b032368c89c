import type { SourceName } from '../model.ts';

/**
 * How many days before today each source can still serve a day's changes (null: any day). Each
 * connector declares its own value through `RegistrySource.maxBackfillDays`; the table lets the
 * scheduler plan catch-up runs without building connectors (docs/sources.md, "Catch-up").
 *
 * - KRS: the daily bulletin (`Biuletyn/{date}`) answers for any past day.
 * - CEIDG: the change feed is queried by date range, any past day.
 * - BIR: GUS keeps its "changed entities" reports for the last 7 days.
 * - VAT: the white list has no change feed; a run re-reads the watched NIPs' state, and the next
 *   day's run sees whatever changed on a missed one. Re-reading past days would spend the daily
 *   request budget several times over, so only yesterday is retried.
 * - synthetic and file: any day (generated, or read from a file).
 */
export const MAX_BACKFILL_DAYS: Readonly<Record<SourceName, number | null>> = {
  krs: null,
  ceidg: null,
  bir: 7,
  vat: 1,
  synthetic: null,
  file: null,
};
