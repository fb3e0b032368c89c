import type { CompanySnapshot, Identifier, SourceName } from '../model.ts';

/**
 * A registry source: the snapshots of one day, as an async stream, so memory stays flat
 * whatever the day's size; and (for live registries) the on-demand lookup of one company.
 */
export interface RegistrySource {
  readonly name: SourceName;
  /**
   * The companies this source reports for `date` (YYYY-MM-DD). For a live registry these are
   * the day's changed entities fetched again; for a file, every line; for synthetic, the day's
   * generated changes. A company absent from the stream is unchanged that day.
   */
  snapshotsForDate(date: string, options?: { signal?: AbortSignal }): AsyncIterable<CompanySnapshot>;
  /**
   * How many days before today the source can still serve a day (null or absent: any day). The
   * scheduler catches up missed days only that far back (sources/backfill.ts holds every value).
   */
  readonly maxBackfillDays?: number | null;
  /** Fetches one company by identifier; null when the source does not know it. */
  lookup?(identifier: Identifier, options?: { signal?: AbortSignal }): Promise<CompanySnapshot | null>;
  /** Lets go of connections (live connectors hold HTTP agents). */
  close?(): Promise<void>;
}
