import { sql, type Kysely } from 'kysely';
import type { EventType, IdentifierType, Severity } from '../../registry/model.ts';
import { EVENTS_WRITER_LOCK, lockEventsWriter } from '../../registry/store.ts';
import { notifyAccountEndpointsChanged } from '../webhooks/endpoint-changes.ts';
import { fanOutWatchStarted, stopUnwatchedMessages } from '../webhooks/watch-fanout.ts';
import type { EventFilters } from './event-filters.ts';
import { identifierKey } from '../../lib/identifiers.ts';
import type { WatchItemStatus, WatchRequestStatus } from './tables.ts';

/**
 * Data access of the watchlist: requests, the watchlist itself and the materialised feed.
 * Functions take `db` or a transaction first. Every write that changes which events a feed holds
 * (watch, unwatch) takes the events writer lock, like the event writers and the fan-out trigger
 * (docs/watchlist.md): a feed row is never missed between a concurrent watch and event insert.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Executor = Kysely<any>;

/** Class id of the per-account lock that serialises adds of one account. */
const ACCOUNT_LOCK_CLASS = 73_080;

export async function lockAccountWatchlist(trx: Executor, accountId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${ACCOUNT_LOCK_CLASS}::int, (${accountId}::bigint % 2147483647)::int)`.execute(trx);
}

/** Stored identifier value -> company id, for the values that name a known company. */
export async function findCompanyIds(db: Executor, type: IdentifierType, values: readonly string[]): Promise<Map<string, string>> {
  if (values.length === 0) return new Map();
  const byKey = new Map<string, string>();
  for (const value of values) {
    const key = identifierKey(type, value);
    if (key !== null) byKey.set(key, value);
  }
  const { rows } = await sql<{ key: string; company_id: string }>`
    SELECT key, company_id FROM company_identifiers WHERE key = ANY(${[...byKey.keys()]}::bigint[])`.execute(db);
  return new Map(rows.map((r) => [byKey.get(r.key)!, r.company_id]));
}

export async function findActiveWatches(db: Executor, accountId: string, companyIds: readonly string[]): Promise<Set<string>> {
  if (companyIds.length === 0) return new Set();
  const { rows } = await sql<{ company_id: string }>`
    SELECT company_id FROM watchlist
    WHERE account_id = ${accountId} AND company_id = ANY(${companyIds}::bigint[]) AND removed_at IS NULL`.execute(db);
  return new Set(rows.map((r) => r.company_id));
}

/** Values of this type still queued in the account's open requests. */
export async function findQueuedValues(
  db: Executor,
  accountId: string,
  type: IdentifierType,
  values: readonly string[],
): Promise<Set<string>> {
  if (values.length === 0) return new Set();
  const { rows } = await sql<{ identifier_value: string }>`
    SELECT i.identifier_value FROM watch_requests r JOIN watch_request_items i ON i.request_id = r.id
    WHERE r.account_id = ${accountId} AND r.status = 'queued' AND r.identifier_type = ${type}
      AND i.status = 'queued' AND i.identifier_value = ANY(${values}::text[])`.execute(db);
  return new Set(rows.map((r) => r.identifier_value));
}

// ------------------------------------------------------------------------------------------------
// Requests

export interface NewRequestItem {
  value: string;
  status: WatchItemStatus;
  charged: boolean;
  companyId: string | null;
}

export interface WatchRequestRow {
  id: string;
  request_ref: string;
  account_id: string;
  identifier_type: IdentifierType;
  status: WatchRequestStatus;
  submitted_count: number;
  queued_count: number;
  charged_credits: number;
  refunded_credits: number;
  created_at: Date;
  completed_at: Date | null;
}

export async function insertRequest(
  trx: Executor,
  r: { ref: string; accountId: string; type: IdentifierType; submitted: number; queued: number; charged: number; createdAt: Date },
  items: readonly NewRequestItem[],
): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO watch_requests (request_ref, account_id, identifier_type, submitted_count, queued_count, charged_credits, created_at)
    VALUES (${r.ref}, ${r.accountId}, ${r.type}, ${r.submitted}, ${r.queued}, ${r.charged}, ${r.createdAt})
    RETURNING id`.execute(trx);
  const id = rows[0]!.id;
  await sql`
    INSERT INTO watch_request_items (request_id, position, identifier_value, status, charged, company_id, settled_at)
    SELECT ${id}::bigint, u.n - 1, u.value, u.status, u.charged, u.company_id, CASE WHEN u.status = 'queued' THEN NULL ELSE ${r.createdAt}::timestamptz END
    FROM unnest(${items.map((i) => i.value)}::text[], ${items.map((i) => i.status)}::text[], ${items.map((i) => i.charged)}::boolean[],
      ${items.map((i) => i.companyId)}::bigint[]) WITH ORDINALITY AS u(value, status, charged, company_id, n)`.execute(trx);
  return id;
}

const REQUEST_COLUMNS = sql`id, request_ref, account_id, identifier_type, status, submitted_count, queued_count, charged_credits, refunded_credits, created_at, completed_at`;

export async function findRequestById(db: Executor, id: string): Promise<WatchRequestRow | null> {
  const { rows } = await sql<WatchRequestRow>`SELECT ${REQUEST_COLUMNS} FROM watch_requests WHERE id = ${id}`.execute(db);
  return rows[0] ?? null;
}

/** The account's own request only: another account's reference is as unknown as a made-up one. */
export async function findRequestByRef(db: Executor, accountId: string, ref: string): Promise<WatchRequestRow | null> {
  const { rows } =
    await sql<WatchRequestRow>`SELECT ${REQUEST_COLUMNS} FROM watch_requests WHERE request_ref = ${ref} AND account_id = ${accountId}`.execute(
      db,
    );
  return rows[0] ?? null;
}

export interface RequestItemRow {
  position: number;
  identifier_value: string;
  status: WatchItemStatus;
  charged: boolean;
  company_id: string | null;
  company_name: string | null;
  primary_identifier: string | null;
  primary_identifier_type: IdentifierType | null;
}

export async function listRequestItems(db: Executor, requestId: string): Promise<RequestItemRow[]> {
  const { rows } = await sql<RequestItemRow>`
    SELECT i.position, i.identifier_value, i.status, i.charged, i.company_id,
           c.name AS company_name, c.primary_identifier, c.primary_identifier_type
    FROM watch_request_items i LEFT JOIN companies c ON c.id = i.company_id
    WHERE i.request_id = ${requestId} ORDER BY i.position`.execute(db);
  return rows;
}

export interface Settlement {
  position: number;
  status: Exclude<WatchItemStatus, 'queued'>;
  companyId: string | null;
}

/** Settles items still queued; an item settled before (a job run twice) keeps its first outcome. */
export async function settleItems(trx: Executor, requestId: string, settlements: readonly Settlement[], at: Date): Promise<number> {
  if (settlements.length === 0) return 0;
  const r = await sql`
    UPDATE watch_request_items i SET status = u.status, company_id = u.company_id, settled_at = ${at}
    FROM unnest(${settlements.map((s) => s.position)}::int[], ${settlements.map((s) => s.status)}::text[], ${settlements.map((s) => s.companyId)}::bigint[]) AS u(position, status, company_id)
    WHERE i.request_id = ${requestId} AND i.position = u.position AND i.status = 'queued'`.execute(trx);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Of `positions`, the items of the request still queued, locked until the transaction ends (in
 * position order, as cancelQueuedItems locks them, so the two never deadlock). The job watches
 * only these: an item a removal cancelled first stays cancelled, and a removal that comes second
 * waits, then finds the company watched and removes it.
 */
export async function claimQueuedItems(trx: Executor, requestId: string, positions: readonly number[]): Promise<Set<number>> {
  if (positions.length === 0) return new Set();
  const { rows } = await sql<{ position: number }>`
    SELECT position FROM watch_request_items
    WHERE request_id = ${requestId} AND position = ANY(${positions}::int[]) AND status = 'queued'
    ORDER BY position FOR UPDATE`.execute(trx);
  return new Set(rows.map((r) => r.position));
}

export interface CancelledItem {
  requestId: string;
  identifierType: IdentifierType;
  identifierValue: string;
  /** The company the value names, when it is known. */
  companyId: string | null;
}

/**
 * A removal of values that are still queued in the account's open add requests: every such item
 * that names one of `values` (of `type`), or under any type one of the companies `companyIds`,
 * ends 'removed' and will not be watched. Returns the items cancelled.
 */
export async function cancelQueuedItems(
  trx: Executor,
  accountId: string,
  type: IdentifierType,
  values: readonly string[],
  companyIds: readonly string[],
  at: Date,
): Promise<CancelledItem[]> {
  if (values.length === 0) return [];
  const { rows } = await sql<{ request_id: string; identifier_type: IdentifierType; identifier_value: string; company_id: string | null }>`
    WITH target AS (
      SELECT i.request_id, i.position, r.identifier_type, i.identifier_value, ci.company_id
      FROM watch_requests r
      JOIN watch_request_items i ON i.request_id = r.id AND i.status = 'queued'
      LEFT JOIN company_identifiers ci ON ci.key = identifier_key(r.identifier_type, i.identifier_value)
      WHERE r.account_id = ${accountId} AND r.status = 'queued'
        AND ((r.identifier_type = ${type} AND i.identifier_value = ANY(${values}::text[])) OR ci.company_id = ANY(${companyIds}::bigint[]))
      ORDER BY i.request_id, i.position
      FOR UPDATE OF i
    )
    UPDATE watch_request_items i SET status = 'removed', company_id = t.company_id, settled_at = ${at}
    FROM target t
    WHERE i.request_id = t.request_id AND i.position = t.position AND i.status = 'queued'
    RETURNING t.request_id, t.identifier_type, t.identifier_value, t.company_id`.execute(trx);
  return rows.map((r) => ({
    requestId: r.request_id,
    identifierType: r.identifier_type,
    identifierValue: r.identifier_value,
    companyId: r.company_id,
  }));
}

/**
 * Completes a request none of whose items is still queued (null when some are, or it is completed
 * already), and returns the refund owed: the charged items that did not end watched, in credits at
 * the price the request was charged (charged_credits over its queued_count, the values charged),
 * not at today's: PRICES may have changed since.
 */
export async function completeRequest(
  trx: Executor,
  requestId: string,
  at: Date,
): Promise<{ refundUnits: number; refundCredits: number } | null> {
  const { rows } = await sql<{ refund_units: number; refunded_credits: number }>`
    WITH owed AS (
      SELECT count(*) FILTER (WHERE charged AND status <> 'watched')::int AS refund_units,
             count(*) FILTER (WHERE status = 'queued')::int AS open
      FROM watch_request_items WHERE request_id = ${requestId}
    )
    UPDATE watch_requests r SET status = 'completed', completed_at = ${at},
           refunded_credits = CASE WHEN r.queued_count > 0 THEN owed.refund_units * r.charged_credits / r.queued_count ELSE 0 END
    FROM owed
    WHERE r.id = ${requestId} AND r.status = 'queued' AND owed.open = 0
    RETURNING owed.refund_units, r.refunded_credits`.execute(trx);
  return rows[0] ? { refundUnits: rows[0].refund_units, refundCredits: rows[0].refunded_credits } : null;
}

export async function accountEmail(db: Executor, accountId: string): Promise<string | null> {
  const { rows } = await sql<{ email: string }>`SELECT email FROM accounts WHERE id = ${accountId}`.execute(db);
  return rows[0]?.email ?? null;
}

// ------------------------------------------------------------------------------------------------
// Watching

/**
 * Watches companies for an account from `since` (when it was asked for; `now` is when this
 * runs). A removed one is watched again from the day it was first watched (DECISIONS 5: "the feed
 * shows a company's events from the day it was first watched"). Returns the companies this call started watching; the others were watched already.
 * Their events dated from the watch's day on enter the account's feed in the same transaction,
 * and the account's webhook endpoints get a message for each not sent before
 * (src/modules/webhooks/watch-fanout.ts).
 */
export async function watchCompanies(
  trx: Executor,
  accountId: string,
  companyIds: readonly string[],
  since: Date,
  now: Date = since,
): Promise<Set<string>> {
  if (companyIds.length === 0) return new Set();
  await lockEventsWriter(trx);
  const day = since.toISOString().slice(0, 10);
  const { rows } = await sql<{ company_id: string; watched_date: string }>`
    INSERT INTO watchlist (account_id, company_id, watched_since, watched_date)
    SELECT ${accountId}::bigint, c, ${since}::timestamptz, ${day}::date FROM unnest(${companyIds}::bigint[]) AS c
    ON CONFLICT (account_id, company_id) DO UPDATE
      SET watched_since = LEAST(watchlist.watched_since, EXCLUDED.watched_since),
          watched_date = LEAST(watchlist.watched_date, EXCLUDED.watched_date), removed_at = NULL
      WHERE watchlist.removed_at IS NOT NULL
    RETURNING company_id, watched_date::text`.execute(trx);
  const started = rows.map((r) => r.company_id);
  if (started.length > 0) {
    await sql`
      WITH fed AS (
        INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
        SELECT ${accountId}::bigint, e.id, e.event_date, e.company_id, e.event_type
        FROM unnest(${started}::bigint[], ${rows.map((r) => r.watched_date)}::date[]) AS w(company_id, watched_date)
        JOIN events e ON e.company_id = w.company_id AND e.event_date >= w.watched_date
        RETURNING event_date, event_type
      )
      INSERT INTO watchlist_feed_counts (account_id, event_date, event_type, n)
      SELECT ${accountId}::bigint, event_date, event_type, count(*) FROM fed GROUP BY 2, 3
      ON CONFLICT (account_id, event_date, event_type) DO UPDATE SET n = watchlist_feed_counts.n + EXCLUDED.n`.execute(trx);
    const byDate = new Map<string, string[]>();
    for (const r of rows) {
      const ids = byDate.get(r.watched_date);
      if (ids) ids.push(r.company_id);
      else byDate.set(r.watched_date, [r.company_id]);
    }
    for (const [from, ids] of byDate) await fanOutWatchStarted(trx, accountId, ids, from, now);
  }
  return new Set(started);
}

/**
 * Stops watching at once: the companies' rows leave the feed, and their webhook messages not sent
 * yet are not sent (webhooks/watch-fanout.ts). Returns those that were watched.
 */
export async function unwatchCompanies(trx: Executor, accountId: string, companyIds: readonly string[], at: Date): Promise<Set<string>> {
  if (companyIds.length === 0) return new Set();
  await lockEventsWriter(trx);
  const { rows } = await sql<{ company_id: string }>`
    UPDATE watchlist SET removed_at = ${at}
    WHERE account_id = ${accountId} AND company_id = ANY(${companyIds}::bigint[]) AND removed_at IS NULL
    RETURNING company_id`.execute(trx);
  const stopped = rows.map((r) => r.company_id);
  if (stopped.length > 0) {
    await sql`
      WITH gone AS (
        DELETE FROM watchlist_feed WHERE account_id = ${accountId} AND company_id = ANY(${stopped}::bigint[])
        RETURNING event_id, event_date, event_type
      ), unsent AS (
        ${stopUnwatchedMessages(accountId, sql`SELECT event_id FROM gone`)}
      ), per_day AS (
        SELECT event_date, event_type, count(*)::int AS n FROM gone GROUP BY 1, 2
      )
      UPDATE watchlist_feed_counts c SET n = c.n - g.n
      FROM per_day g
      WHERE c.account_id = ${accountId} AND c.event_date = g.event_date AND c.event_type = g.event_type`.execute(trx);
    await sql`DELETE FROM watchlist_feed_counts WHERE account_id = ${accountId} AND n = 0`.execute(trx);
    // A delivery run that read the stopped messages ahead reads its endpoints' messages again.
    await notifyAccountEndpointsChanged(trx, accountId);
  }
  return new Set(stopped);
}

export interface WatchedRow {
  primary_identifier: string;
  name: string;
  watched_since: string;
  last_event_at: string | null;
  events_count: number;
}

export async function countWatched(db: Executor, accountId: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM watchlist WHERE account_id = ${accountId} AND removed_at IS NULL`.execute(db);
  return rows[0]!.n;
}

/** Newest watch first; events_count and last_event_at count what the account's feed shows. */
export async function listWatched(db: Executor, accountId: string, limit: number, offset: number): Promise<WatchedRow[]> {
  const { rows } = await sql<WatchedRow>`
    SELECT c.primary_identifier, c.name, w.watched_date::text AS watched_since,
           f.last_event_date::text AS last_event_at, f.n AS events_count
    FROM (
      SELECT company_id, watched_since, watched_date FROM watchlist
      WHERE account_id = ${accountId} AND removed_at IS NULL
      ORDER BY watched_since DESC, company_id DESC LIMIT ${limit} OFFSET ${offset}
    ) w
    JOIN companies c ON c.id = w.company_id
    CROSS JOIN LATERAL (
      SELECT count(*)::int AS n, max(event_date) AS last_event_date FROM watchlist_feed
      WHERE account_id = ${accountId} AND company_id = w.company_id
    ) f
    ORDER BY w.watched_since DESC, w.company_id DESC`.execute(db);
  return rows;
}

// ------------------------------------------------------------------------------------------------
// Events

export interface EventRow {
  id: number;
  event_type: EventType;
  old_value: string | null;
  new_value: string | null;
  event_date: string;
  severity: Severity;
}

export interface FeedEventRow extends EventRow {
  primary_identifier: string;
  identifier_type: IdentifierType;
  company_name: string;
}

function filterSql(f: EventFilters, alias: string) {
  const col = (c: string) => sql.ref(`${alias}.${c}`);
  return sql.join(
    [
      sql`true`,
      // An enum column: the parameter is a text array literal cast to the enum's array type.
      ...(f.types === null ? [] : [sql`${col('event_type')} = ANY(${f.types}::event_type[])`]),
      ...(f.fromDate === null ? [] : [sql`${col('event_date')} >= ${f.fromDate}::date`]),
      ...(f.toDate === null ? [] : [sql`${col('event_date')} <= ${f.toDate}::date`]),
    ],
    sql` AND `,
  );
}

/** From the per-day counters: a sum over at most days x types rows, whatever the feed's size. */
export async function countFeed(db: Executor, accountId: string, f: EventFilters): Promise<number> {
  if (f.types?.length === 0) return 0;
  const { rows } = await sql<{ n: number }>`
    SELECT coalesce(sum(c.n), 0)::int AS n FROM watchlist_feed_counts c WHERE c.account_id = ${accountId} AND ${filterSql(f, 'c')}`.execute(
    db,
  );
  return rows[0]!.n;
}

const FEED_COLUMNS = sql`f.event_id::float8 AS id, f.event_type, e.old_value, e.new_value, f.event_date::text AS event_date, e.severity,
  c.primary_identifier, c.primary_identifier_type AS identifier_type, c.name AS company_name`;

/**
 * Newest first (event_date, then id). `total` (the count under the same filters, read in the
 * same snapshot) lets a page in the older half be read from the other end of the index, so the
 * last page costs what the first does.
 */
export async function listFeedPage(
  db: Executor,
  accountId: string,
  f: EventFilters,
  limit: number,
  offset: number,
  total: number,
): Promise<FeedEventRow[]> {
  if (f.types?.length === 0 || offset >= total) return [];
  const fromEnd = offset > total / 2;
  const { rows } = fromEnd
    ? await sql<FeedEventRow>`
      SELECT ${FEED_COLUMNS}
      FROM (
        SELECT event_id, event_date, company_id, event_type FROM watchlist_feed f
        WHERE f.account_id = ${accountId} AND ${filterSql(f, 'f')}
        ORDER BY f.event_date, f.event_id LIMIT ${Math.min(limit, total - offset)} OFFSET ${Math.max(0, total - offset - limit)}
      ) f
      JOIN events e ON e.event_date = f.event_date AND e.id = f.event_id
      JOIN companies c ON c.id = f.company_id
      ORDER BY f.event_date DESC, f.event_id DESC`.execute(db)
    : await sql<FeedEventRow>`
      SELECT ${FEED_COLUMNS}
      FROM (
        SELECT event_id, event_date, company_id, event_type FROM watchlist_feed f
        WHERE f.account_id = ${accountId} AND ${filterSql(f, 'f')}
        ORDER BY f.event_date DESC, f.event_id DESC LIMIT ${limit} OFFSET ${offset}
      ) f
      JOIN events e ON e.event_date = f.event_date AND e.id = f.event_id
      JOIN companies c ON c.id = f.company_id
      ORDER BY f.event_date DESC, f.event_id DESC`.execute(db);
  return rows;
}

/** Runs reads in one snapshot, so a page and its total agree even while a daily run writes. */
export async function inSnapshot<T>(db: Executor, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(fn);
}

/**
 * The feed's events with an id above `afterId`, oldest first, read under the events writer lock
 * in shared mode: no event-writing transaction is in flight while the rows are read, so every id
 * at or below the last one returned is already visible (docs/watchlist.md gives the argument).
 */
export async function listFeedAfter(
  db: Executor,
  accountId: string,
  f: EventFilters,
  afterId: number,
  limit: number,
): Promise<FeedEventRow[]> {
  if (f.types?.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    // A writer's transaction holds the lock for the few milliseconds of its event inserts and
    // commit; a reader never waits longer than one of them, and gives up rather than hang.
    await sql`SET LOCAL lock_timeout = '10s'`.execute(trx);
    await sql`SELECT pg_advisory_xact_lock_shared(${EVENTS_WRITER_LOCK}::bigint)`.execute(trx);
    const { rows } = await sql<FeedEventRow>`
      SELECT ${FEED_COLUMNS}
      FROM (
        SELECT event_id, event_date, company_id, event_type FROM watchlist_feed f
        WHERE f.account_id = ${accountId} AND f.event_id > ${afterId} AND ${filterSql(f, 'f')}
        ORDER BY f.event_id LIMIT ${limit}
      ) f
      JOIN events e ON e.event_date = f.event_date AND e.id = f.event_id
      JOIN companies c ON c.id = f.company_id
      ORDER BY f.event_id`.execute(trx);
    return rows;
  });
}

/** PostgreSQL's lock_not_available: listFeedAfter waited its lock_timeout for a writer. */
export function isLockTimeout(e: unknown): boolean {
  return (e as { code?: string } | null)?.code === '55P03';
}

export async function countCompanyEvents(db: Executor, companyId: string, f: EventFilters): Promise<number> {
  if (f.types?.length === 0) return 0;
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM events e WHERE e.company_id = ${companyId} AND ${filterSql(f, 'e')}`.execute(db);
  return rows[0]!.n;
}

/** All of a company's events, newest first (event_date, then id). */
export async function listCompanyEventsPage(
  db: Executor,
  companyId: string,
  f: EventFilters,
  limit: number,
  offset: number,
): Promise<EventRow[]> {
  if (f.types?.length === 0) return [];
  const { rows } = await sql<EventRow>`
    SELECT e.id::float8 AS id, e.event_type, e.old_value, e.new_value, e.event_date::text AS event_date, e.severity
    FROM events e WHERE e.company_id = ${companyId} AND ${filterSql(f, 'e')}
    ORDER BY e.event_date DESC, e.id DESC LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return rows;
}

export interface CompanyRef {
  id: string;
  primary_identifier: string;
  primary_identifier_type: IdentifierType;
  name: string;
}

export async function findCompanyRef(db: Executor, type: IdentifierType, value: string): Promise<CompanyRef | null> {
  const key = identifierKey(type, value);
  if (key === null) return null;
  const { rows } = await sql<CompanyRef>`
    SELECT c.id, c.primary_identifier, c.primary_identifier_type, c.name
    FROM company_identifiers ci JOIN companies c ON c.id = ci.company_id
    WHERE ci.key = ${key}::bigint`.execute(db);
  return rows[0] ?? null;
}
