import type { ColumnType, Generated } from 'kysely';
import type { EventType, IdentifierType } from '../../registry/model.ts';

/** Kysely table shapes of migration 20261121000500_watchlist; to be merged into src/db/schema.ts `Database`. */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** bigint comes back from pg as a string. */
type BigIntColumn = ColumnType<string, number | bigint | string, number | bigint | string>;
/** `date` columns are parsed as YYYY-MM-DD strings (src/db/database.ts). */
type DateColumn = ColumnType<string, string, string>;

export type WatchRequestStatus = 'queued' | 'completed';
export type WatchItemStatus = 'queued' | 'watched' | 'already_watched' | 'already_queued' | 'not_found' | 'removed';

export interface WatchRequestsTable {
  id: Generated<string>;
  request_ref: string;
  account_id: BigIntColumn;
  identifier_type: IdentifierType;
  status: ColumnType<WatchRequestStatus, WatchRequestStatus | undefined, WatchRequestStatus>;
  submitted_count: number;
  queued_count: number;
  charged_credits: number;
  refunded_credits: Generated<number>;
  created_at: GeneratedTimestamp;
  completed_at: Timestamp | null;
}

export interface WatchRequestItemsTable {
  request_id: BigIntColumn;
  position: number;
  identifier_value: string;
  status: WatchItemStatus;
  /** Charged when the request was taken; refunded unless the item ends 'watched'. */
  charged: boolean;
  company_id: BigIntColumn | null;
  settled_at: Timestamp | null;
}

export interface WatchlistTable {
  account_id: BigIntColumn;
  company_id: BigIntColumn;
  watched_since: Timestamp;
  watched_date: DateColumn;
  removed_at: Timestamp | null;
}

export interface WatchlistFeedTable {
  account_id: BigIntColumn;
  event_id: BigIntColumn;
  event_date: DateColumn;
  company_id: BigIntColumn;
  event_type: EventType;
}

export interface WatchlistFeedCountsTable {
  account_id: BigIntColumn;
  event_date: DateColumn;
  event_type: EventType;
  n: number;
}

export interface WatchlistTables {
  watch_requests: WatchRequestsTable;
  watch_request_items: WatchRequestItemsTable;
  watchlist: WatchlistTable;
  watchlist_feed: WatchlistFeedTable;
  watchlist_feed_counts: WatchlistFeedCountsTable;
}
