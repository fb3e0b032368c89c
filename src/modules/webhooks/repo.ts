import { sql, type Kysely } from 'kysely';
import type { EventType } from '../../registry/model.ts';
import type { DeliveryStatus, EndpointStatus } from './tables.ts';

/**
 * Data access of webhooks: endpoints, secrets and deliveries. Functions take `db` or a transaction
 * first. A delivery row is claimed by moving its next_attempt_at to the end of a lease: a worker
 * that dies mid-attempt leaves a row that becomes due again when the lease ends (the same
 * webhook-id is sent again), and a second worker never takes a row the first one holds.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Executor = Kysely<any>;

const ENDPOINT_LOCK_CLASS = 73_081;

/** Serialises endpoint creation of one account (the 10-endpoint limit). */
export async function lockAccountEndpoints(trx: Executor, accountId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${ENDPOINT_LOCK_CLASS}::int, (${accountId}::bigint % 2147483647)::int)`.execute(trx);
}

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  event_types: EventType[];
  status: EndpointStatus;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT_COLUMNS = sql`id, account_id, url, description, event_types::text[] AS event_types, status, disabled_reason, failing_since, created_at, updated_at`;

export async function countEndpoints(db: Executor, accountId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = ${accountId}`.execute(db);
  return rows[0]!.n;
}

export async function insertEndpoint(
  trx: Executor,
  e: { accountId: string; url: string; description: string | null; eventTypes: readonly EventType[]; secret: string; at: Date },
): Promise<EndpointRow> {
  const { rows } = await sql<EndpointRow>`
    INSERT INTO webhook_endpoints (account_id, url, description, event_types, created_at, updated_at)
    VALUES (${e.accountId}, ${e.url}, ${e.description}, ${[...e.eventTypes]}::event_type[], ${e.at}, ${e.at})
    RETURNING ${ENDPOINT_COLUMNS}`.execute(trx);
  const row = rows[0]!;
  await sql`INSERT INTO webhook_secrets (endpoint_id, secret, created_at) VALUES (${row.id}, ${e.secret}, ${e.at})`.execute(trx);
  return row;
}

export async function listEndpoints(db: Executor, accountId: string): Promise<EndpointRow[]> {
  const { rows } =
    await sql<EndpointRow>`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = ${accountId} ORDER BY id`.execute(db);
  return rows;
}

/** The endpoint when it belongs to the account; another account's is null (404 to the caller). */
export async function findEndpoint(db: Executor, accountId: string, id: string): Promise<EndpointRow | null> {
  const { rows } =
    await sql<EndpointRow>`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId}`.execute(db);
  return rows[0] ?? null;
}

export async function updateEndpoint(
  db: Executor,
  accountId: string,
  id: string,
  patch: { url?: string; description?: string | null; eventTypes?: readonly EventType[]; status?: EndpointStatus },
  at: Date,
): Promise<EndpointRow | null> {
  const sets = [sql`updated_at = ${at}`];
  if (patch.url !== undefined) sets.push(sql`url = ${patch.url}`);
  if (patch.description !== undefined) sets.push(sql`description = ${patch.description}`);
  if (patch.eventTypes !== undefined) sets.push(sql`event_types = ${[...patch.eventTypes]}::event_type[]`);
  // Enabling again starts the 5-day count afresh.
  if (patch.status !== undefined)
    sets.push(
      sql`status = ${patch.status}`,
      sql`disabled_reason = ${patch.status === 'disabled' ? 'by the account' : null}`,
      sql`failing_since = NULL`,
    );
  const { rows } = await sql<EndpointRow>`
    UPDATE webhook_endpoints SET ${sql.join(sets, sql`, `)} WHERE id = ${id} AND account_id = ${accountId}
    RETURNING ${ENDPOINT_COLUMNS}`.execute(db);
  return rows[0] ?? null;
}

export async function deleteEndpoint(db: Executor, accountId: string, id: string): Promise<boolean> {
  const r = await sql`DELETE FROM webhook_endpoints WHERE id = ${id} AND account_id = ${accountId}`.execute(db);
  return Number(r.numAffectedRows ?? 0) > 0;
}

/** Previous secrets kept signing beside the current one: rotations within a day each keep their promise, up to this many. */
const MAX_PREVIOUS_SECRETS = 4;

/**
 * The new secret becomes current; the previous current one keeps signing until `overlapUntil`, and
 * one rotated out earlier keeps the expiry its rotation answered (a second rotation within 24 h
 * does not cut the first one's overlap short), the oldest dropped beyond MAX_PREVIOUS_SECRETS.
 *
 * False when the endpoint is gone. The endpoint's row is taken first (FOR NO KEY UPDATE: the
 * fan-out's FOR KEY SHARE does not wait for it), so two rotations run one after the other, the
 * second expiring the first's new secret (one current secret, never two without an expiry), and
 * a deletion meanwhile makes this a 404, not a foreign-key violation (found by an audit).
 */
export async function rotateSecret(trx: Executor, endpointId: string, secret: string, at: Date, overlapUntil: Date): Promise<boolean> {
  const { rows } = await sql`SELECT id FROM webhook_endpoints WHERE id = ${endpointId} FOR NO KEY UPDATE`.execute(trx);
  if (rows.length === 0) return false;
  await sql`
    DELETE FROM webhook_secrets WHERE endpoint_id = ${endpointId} AND expires_at IS NOT NULL AND (expires_at <= ${at} OR id NOT IN (
      SELECT id FROM webhook_secrets WHERE endpoint_id = ${endpointId} AND expires_at > ${at} ORDER BY expires_at DESC LIMIT ${MAX_PREVIOUS_SECRETS - 1}))`.execute(
    trx,
  );
  await sql`UPDATE webhook_secrets SET expires_at = ${overlapUntil} WHERE endpoint_id = ${endpointId} AND expires_at IS NULL`.execute(trx);
  await sql`INSERT INTO webhook_secrets (endpoint_id, secret, created_at) VALUES (${endpointId}, ${secret}, ${at})`.execute(trx);
  return true;
}

// ------------------------------------------------------------------------------------------------
// Messages

/**
 * What a message of an event that left the feed before it was sent says in the delivery log
 * (watch-fanout.ts stopUnwatchedMessages); a 2xx under way then is still recorded over it, and
 * watching the company again sends the message after all (dispatch-repo.ts, watch-fanout.ts).
 */
export const UNWATCHED_ERROR = 'Not sent: the company was removed from the watchlist before delivery.';

/**
 * The feed form of an event (src/modules/watchlist/repo.ts FEED_COLUMNS) as compact json in key
 * order (`to_json` of a row: no spaces, unlike json_build_object), which the dispatcher puts into
 * the body as it is.
 */
export const FEED_JSON = sql`(SELECT to_json(x) FROM (SELECT f.event_id AS id, f.event_type AS event_type, e.old_value AS old_value,
  e.new_value AS new_value, f.event_date::text AS event_date, e.severity AS severity, c.primary_identifier AS primary_identifier,
  c.primary_identifier_type AS identifier_type, c.name AS company_name) x)`;

/**
 * One delivery per feed row in the id range and enabled endpoint of the row's account whose types
 * match: exactly the events the feed shows. Unique per endpoint and event: with `again` (a range
 * fanned out before, or whose messages a replay queued meanwhile) the messages already there are
 * left as they are (ON CONFLICT DO NOTHING); without it, such a message fails the statement with a
 * unique violation (23505), and the caller runs it again with `again`. A plain INSERT is about a
 * tenth cheaper than one with ON CONFLICT (its speculative insertion, a message at a time:
 * bench/webhooks-fanout.ts), and almost every range is fanned out once.
 *
 * The enabled endpoints are taken FOR KEY SHARE, as a foreign key's check would take each
 * message's (migration 20261128000300_webhook_deliveries_keys): an endpoint deleted meanwhile
 * waits for this commit, and its deletion's trigger then deletes these messages too.
 *
 * The plan is fixed by the query's shape, not left to statistics: the enabled endpoints first
 * (materialised, and locked once each), then for each a range of the feed's primary key (account, event id), then one
 * primary-key probe of the event (date, id) and of the company per feed row (LATERAL subqueries
 * kept apart by OFFSET 0: nested loops with index probes, whatever the row estimates say). Planned freely, the join ran for 14
 * minutes at 100,000 companies: a day's events lie beyond the statistics' histogram (estimated at
 * one row), and a nested loop over a sequential scan of the month's events partition looked cheap.
 */
export async function fanOutEvents(
  db: Executor,
  r: { fromId: number; toId: number; fromDate: string; toDate: string; at: Date; again: boolean },
): Promise<number> {
  const result = await sql`
    WITH ep AS MATERIALIZED (
      SELECT id, account_id, event_types FROM webhook_endpoints WHERE status = 'enabled' FOR KEY SHARE
    )
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, payload, next_attempt_at, created_at)
    SELECT ep.id, ep.account_id, f.event_id, f.event_type, ${FEED_JSON}, ${r.at}, ${r.at}
    FROM ep
    CROSS JOIN LATERAL (
      SELECT f.event_id, f.event_type, f.event_date, f.company_id FROM watchlist_feed f
      WHERE f.account_id = ep.account_id AND f.event_id BETWEEN ${r.fromId} AND ${r.toId}
        AND f.event_date BETWEEN ${r.fromDate}::date AND ${r.toDate}::date
        AND (cardinality(ep.event_types) = 0 OR f.event_type = ANY(ep.event_types))
      OFFSET 0
    ) f
    CROSS JOIN LATERAL (
      SELECT e.old_value, e.new_value, e.severity FROM events e WHERE e.event_date = f.event_date AND e.id = f.event_id OFFSET 0
    ) e
    CROSS JOIN LATERAL (
      SELECT c.primary_identifier, c.primary_identifier_type, c.name FROM companies c WHERE c.id = f.company_id OFFSET 0
    ) c
    ORDER BY f.event_id, ep.id
    ${r.again ? sql`ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING` : sql``}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * A fan-out job that has run forgets its hold (migration 20261201000100_webhook_fanout_holds), so
 * that the end of its run does not queue it again.
 */
export async function forgetFanOutHold(db: Executor, jobKey: string): Promise<void> {
  await sql`DELETE FROM webhook_fanout_holds WHERE job_key = ${jobKey}`.execute(db);
}

/**
 * Replay: the feed's events above `afterId` for one endpoint, queued again (or for the first
 * time); the endpoint locked as in fanOutEvents. A message sent before starts again as a new one
 * (attempts 0, its last attempt's outcome cleared, the whole retry schedule ahead), keeping its id.
 */
export async function requeueFeedAfter(
  db: Executor,
  endpoint: { id: string; account_id: string },
  afterId: number,
  at: Date,
): Promise<number> {
  const result = await sql`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, payload, next_attempt_at, created_at)
    SELECT ep.id, ep.account_id, f.event_id, f.event_type, ${FEED_JSON}, ${at}, ${at}
    FROM webhook_endpoints ep
    JOIN watchlist_feed f ON f.account_id = ep.account_id AND f.event_id > ${afterId}
    JOIN events e ON e.event_date = f.event_date AND e.id = f.event_id
    JOIN companies c ON c.id = f.company_id
    WHERE ep.id = ${endpoint.id} AND ep.account_id = ${endpoint.account_id}
      AND (cardinality(ep.event_types) = 0 OR f.event_type = ANY(ep.event_types))
    ORDER BY f.event_id
    FOR KEY SHARE OF ep
    ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO UPDATE
      SET status = 'pending', attempts = 0, next_attempt_at = ${at}, delivered_at = NULL, last_attempt_at = NULL,
        last_response_status = NULL, last_response_body = NULL, last_error = NULL`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** A test message; null when the endpoint is gone (its row locked as in fanOutEvents). */
export async function insertTestMessage(
  db: Executor,
  endpoint: { id: string; account_id: string },
  eventType: EventType,
  payload: unknown,
  at: Date,
): Promise<string | null> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at, created_at)
    SELECT ep.id, ep.account_id, ${eventType}, ${JSON.stringify(payload)}::json, ${at}, ${at}
    FROM (SELECT id, account_id FROM webhook_endpoints WHERE id = ${endpoint.id} AND account_id = ${endpoint.account_id} FOR KEY SHARE) ep
    RETURNING id`.execute(db);
  return rows[0]?.id ?? null;
}

export interface DeliveryRow {
  id: string;
  event_id: number | null;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export async function listDeliveries(
  db: Executor,
  endpointId: string,
  status: DeliveryStatus | undefined,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: DeliveryRow[] }> {
  const where = sql`endpoint_id = ${endpointId}${status ? sql` AND status = ${status}` : sql``}`;
  const {
    rows: [count],
  } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`.execute(db);
  const { rows } = await sql<DeliveryRow>`
    SELECT id, event_id::float8 AS event_id, event_type, status, attempts, last_attempt_at,
      CASE WHEN status = 'pending' THEN next_attempt_at END AS next_attempt_at, last_response_status, last_error, created_at, delivered_at
    FROM webhook_deliveries WHERE ${where} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return { total: count!.n, rows };
}

/**
 * Sends one delivery again now. Should an attempt of it be in flight, that attempt's outcome is
 * not recorded and the message goes again once it ends (the attempt may have started before
 * whatever the caller is recovering from); a failed message gets this one attempt beyond its
 * schedule (its attempts stay counted).
 */
export async function requeueDelivery(db: Executor, endpointId: string, deliveryId: string, at: Date): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    UPDATE webhook_deliveries SET status = 'pending', delivered_at = NULL, next_attempt_at = ${at}
    WHERE id = ${deliveryId} AND endpoint_id = ${endpointId} RETURNING id`.execute(db);
  return rows.length > 0;
}
