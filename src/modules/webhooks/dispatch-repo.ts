import { sql, type RawBuilder } from 'kysely';
import type { EventType } from '../../registry/model.ts';
import { UNWATCHED_ERROR, type Executor } from './repo.ts';

/**
 * Data access of the delivery worker (dispatcher.ts): endpoint leases, the read of due messages,
 * and the record of outcomes. A dispatcher run sends an endpoint's messages only while it holds
 * the endpoint's lease (webhook_endpoints.lease_owner/lease_until); two runs never hold the same
 * endpoint, so they never send the same message, and a run that dies loses its endpoints when
 * their leases lapse: their messages are still pending and go again, with the same webhook-id.
 * The messages themselves are not written until their outcome is recorded.
 */

/** The first due message of an endpoint (the due index's head): probed once per endpoint. */
const FIRST_DUE = sql`(SELECT d.next_attempt_at FROM webhook_deliveries d
  WHERE d.endpoint_id = ep.id AND d.status = 'pending' ORDER BY d.next_attempt_at LIMIT 1)`;

export interface LeasedEndpoint {
  id: string;
  url: string;
}

/**
 * Takes up to `limit` enabled endpoints that have a due message and no live lease, those whose
 * oldest due message is oldest first. Endpoint rows another run is taking at the same moment are
 * skipped (SKIP LOCKED); the UPDATE re-checks the lease under the row lock.
 */
export async function acquireEndpoints(
  db: Executor,
  r: { owner: string; now: Date; leaseUntil: Date; limit: number },
): Promise<LeasedEndpoint[]> {
  const { rows } = await sql<LeasedEndpoint>`
    WITH free AS (
      SELECT ep.id, f.due FROM webhook_endpoints ep CROSS JOIN LATERAL (SELECT ${FIRST_DUE} AS due) f
      WHERE ep.status = 'enabled' AND (ep.lease_until IS NULL OR ep.lease_until <= ${r.now}) AND f.due <= ${r.now}
      ORDER BY f.due, ep.id LIMIT ${r.limit}
      FOR NO KEY UPDATE OF ep SKIP LOCKED
    )
    UPDATE webhook_endpoints ep SET lease_owner = ${r.owner}, lease_until = ${r.leaseUntil}
    FROM free WHERE ep.id = free.id AND ep.status = 'enabled' AND (ep.lease_until IS NULL OR ep.lease_until <= ${r.now})
    RETURNING ep.id, ep.url`.execute(db);
  return rows;
}

/** An endpoint's signing secrets at `now` (`secrets`, a text[]): the current one first, then those in their rotation overlap. */
function signingSecrets(endpointId: RawBuilder<unknown>, now: Date): RawBuilder<unknown> {
  return sql`(
    SELECT coalesce(array_agg(s.secret ORDER BY s.expires_at NULLS FIRST, s.id DESC), '{}') AS secrets FROM webhook_secrets s
    WHERE s.endpoint_id = ${endpointId} AND (s.expires_at IS NULL OR s.expires_at > ${now})
  )`;
}

/**
 * Extends this run's leases; returns the endpoints still its own and enabled, with their current
 * URL and signing secrets (as readDueDeliveries orders them), for the messages read ahead.
 */
export async function renewEndpoints(
  db: Executor,
  r: { owner: string; ids: readonly string[]; leaseUntil: Date; now: Date },
): Promise<(LeasedEndpoint & { secrets: string[] })[]> {
  if (r.ids.length === 0) return [];
  const { rows } = await sql<LeasedEndpoint & { secrets: string[] }>`
    WITH kept AS (
      UPDATE webhook_endpoints SET lease_until = ${r.leaseUntil}
      WHERE id = ANY(${[...r.ids]}::bigint[]) AND lease_owner = ${r.owner} AND status = 'enabled'
      RETURNING id, url
    )
    SELECT k.id, k.url, s.secrets FROM kept k
    CROSS JOIN LATERAL ${signingSecrets(sql`k.id`, r.now)} s`.execute(db);
  return rows;
}

export interface DueDelivery {
  id: string;
  endpoint_id: string;
  url: string;
  /** The endpoint's signing secrets now: the current one first, then one in its rotation overlap. */
  secrets: string[];
  event_type: EventType;
  payload: string;
  created_at: Date;
  /** Attempts made before this one. */
  attempts: number;
  /** When it fell due, as read: with `attempts`, what tells a replay or retry since (RecordedAttempt). */
  next_attempt_at: Date;
  /** The id as a number, for ordering (ids stay far below 2^53). */
  order: number;
}

/**
 * Up to `want[i].count` due messages of each endpoint `want[i].endpointId` this run holds (and
 * that is still enabled), in the order they fell due, leaving out `held` (messages this run has
 * in memory: queued, in flight, or with an outcome not yet recorded). One index range each.
 */
export async function readDueDeliveries(
  db: Executor,
  r: { owner: string; now: Date; want: readonly { endpointId: string; count: number }[]; held: readonly string[] },
): Promise<DueDelivery[]> {
  if (r.want.length === 0) return [];
  // The secrets come as one space-separated text (a secret is `whsec_` and base64: no spaces), split
  // once per endpoint: cheaper than a text[] parsed on every row.
  const { rows } = await sql<Omit<DueDelivery, 'secrets' | 'order'> & { secrets: string | string[]; order?: number }>`
    SELECT d.id, d.endpoint_id, ep.url, array_to_string(s.secrets, ' ') AS secrets, d.event_type, d.payload::text AS payload, d.created_at, d.attempts, d.next_attempt_at
    FROM unnest(${r.want.map((w) => w.endpointId)}::bigint[], ${r.want.map((w) => w.count)}::int[]) AS w(endpoint_id, n)
    JOIN webhook_endpoints ep ON ep.id = w.endpoint_id AND ep.status = 'enabled' AND ep.lease_owner = ${r.owner}
    CROSS JOIN LATERAL ${signingSecrets(sql`w.endpoint_id`, r.now)} s
    CROSS JOIN LATERAL (
      SELECT d.id, d.endpoint_id, d.event_type, d.payload, d.created_at, d.attempts, d.next_attempt_at FROM webhook_deliveries d
      WHERE d.endpoint_id = w.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= ${r.now}
        AND NOT (d.id = ANY(${[...r.held]}::bigint[]))
      ORDER BY d.next_attempt_at, d.id LIMIT w.n
    ) d
    ORDER BY d.endpoint_id, d.id`.execute(db);
  const split = new Map<string, string[]>();
  for (const row of rows) {
    const text = row.secrets as string;
    let secrets = split.get(text);
    if (secrets === undefined) split.set(text, (secrets = text === '' ? [] : text.split(' ')));
    row.secrets = secrets;
    row.order = Number(row.id);
  }
  return rows as DueDelivery[];
}

export interface RecordedAttempt {
  id: string;
  endpointId: string;
  ok: boolean;
  gone: boolean;
  status: number | null;
  error: string | null;
  body: string | null;
  /** Null with ok false: the schedule is spent and the message failed. */
  nextAttemptAt: Date | null;
  /**
   * The message's attempts and due time when it was read: its outcome is recorded only while both
   * are still so. A replay or a retry meanwhile (due again at once; a replay also sets attempts
   * back to 0) keeps the message pending, to be sent again, rather than have this older attempt's
   * outcome written over it. The due time tells a replay during the first attempt (attempts 0
   * before and after it).
   */
  attemptsBefore: number;
  dueBefore: Date;
  /** When the attempt started (last_attempt_at) and when its answer came (delivered_at on a 2xx). */
  at: Date;
  endedAt: Date;
}

export interface DisabledEndpoint {
  id: string;
  account_id: string;
  url: string;
  email: string;
  reason: 'gone' | 'failing';
}

export const FAILING_DAYS = 5;

/**
 * Records a batch of attempts with what they mean for their endpoints: a 2xx ends an endpoint's
 * failing streak, a failure starts one, 410 disables at once, and a streak of 5 days disables too
 * (the caller mails the account in the same transaction). Gives back `release` (endpoints the
 * run is done with) in the same transaction. A batch of 2xx only is one statement.
 */
export async function recordAttempts(
  trx: Executor,
  attempts: readonly RecordedAttempt[],
  now: Date,
  release: { owner: string; ids: readonly string[] },
): Promise<DisabledEndpoint[]> {
  const col = <T>(f: (a: RecordedAttempt) => T) => attempts.map(f);
  const failed = [...new Set(attempts.filter((a) => !a.ok).map((a) => a.endpointId))];
  const ok = [...new Set(attempts.filter((a) => a.ok).map((a) => a.endpointId))];
  const gone = [...new Set(attempts.filter((a) => a.gone).map((a) => a.endpointId))];
  // The messages still as the attempts found them (pending, same attempts and due time); and a 2xx
  // under way as its company was unwatched (stopped: failed with UNWATCHED_ERROR), delivered
  // whatever the stop says. Two updates of disjoint rows: `d.status = 'pending'` stays a plain
  // condition of the first, the statement every batch runs. The attempts' arrays are sent once
  // (`u`), inlined into both updates (NOT MATERIALIZED: each plans as the unnest itself). One
  // UPDATE of the endpoints (two updates of one row in a statement would lose one).
  await sql`
    WITH u AS NOT MATERIALIZED (
      SELECT * FROM unnest(${col((a) => a.id)}::bigint[], ${col((a) => a.ok)}::boolean[], ${col((a) => a.nextAttemptAt)}::timestamptz[],
        ${col((a) => a.status)}::int[], ${col((a) => a.error)}::text[], ${col((a) => a.body)}::text[], ${col((a) => a.at)}::timestamptz[],
        ${col((a) => a.endpointId)}::bigint[], ${col((a) => a.endedAt)}::timestamptz[], ${col((a) => a.attemptsBefore)}::int[],
        ${col((a) => a.dueBefore)}::timestamptz[])
        AS u(id, ok, next_at, code, error, body, at, endpoint_id, ended_at, attempts_before, due_before)
    ), recorded AS (
      UPDATE webhook_deliveries d SET
        status = CASE WHEN u.ok THEN 'delivered' WHEN u.next_at IS NULL THEN 'failed' ELSE 'pending' END,
        next_attempt_at = CASE WHEN u.ok THEN NULL ELSE u.next_at END,
        attempts = d.attempts + 1, last_attempt_at = u.at,
        last_response_status = u.code, last_error = u.error, last_response_body = u.body,
        delivered_at = CASE WHEN u.ok THEN u.ended_at ELSE NULL END
      FROM u
      WHERE d.endpoint_id = u.endpoint_id AND d.id = u.id AND d.status = 'pending' AND d.attempts = u.attempts_before
        AND d.next_attempt_at = u.due_before
      RETURNING d.id
    ), delivered_after_stop AS (
      UPDATE webhook_deliveries d SET
        status = 'delivered', next_attempt_at = NULL, attempts = d.attempts + 1, last_attempt_at = u.at,
        last_response_status = u.code, last_error = u.error, last_response_body = u.body, delivered_at = u.ended_at
      FROM u
      WHERE u.ok AND d.endpoint_id = u.endpoint_id AND d.id = u.id AND d.status = 'failed' AND d.last_error = ${UNWATCHED_ERROR}
        AND d.attempts = u.attempts_before AND d.next_attempt_at = u.due_before
      RETURNING d.id
    )
    UPDATE webhook_endpoints SET
      -- A 2xx in the batch ends the streak, whatever else failed beside it.
      failing_since = CASE WHEN id = ANY(${ok}::bigint[]) THEN NULL WHEN id = ANY(${failed}::bigint[]) THEN coalesce(failing_since, ${now}) ELSE failing_since END,
      lease_owner = CASE WHEN id = ANY(${[...release.ids]}::bigint[]) AND lease_owner = ${release.owner} THEN NULL ELSE lease_owner END,
      lease_until = CASE WHEN id = ANY(${[...release.ids]}::bigint[]) AND lease_owner = ${release.owner} THEN NULL ELSE lease_until END
    WHERE (id = ANY(${ok}::bigint[]) AND failing_since IS NOT NULL)
      OR (id = ANY(${failed}::bigint[]) AND NOT id = ANY(${ok}::bigint[]) AND failing_since IS NULL)
      OR (id = ANY(${[...release.ids]}::bigint[]) AND lease_owner = ${release.owner})`.execute(trx);

  if (gone.length === 0 && failed.length === 0) return [];
  const streakStart = new Date(now.getTime() - FAILING_DAYS * 86_400_000);
  const { rows } = await sql<DisabledEndpoint>`
    UPDATE webhook_endpoints ep SET status = 'disabled', updated_at = ${now},
      disabled_reason = CASE WHEN ep.id = ANY(${gone}::bigint[]) THEN 'The endpoint answered 410 Gone.' ELSE 'Every attempt failed for 5 days.' END
    FROM accounts a
    WHERE a.id = ep.account_id AND ep.status = 'enabled'
      AND (ep.id = ANY(${gone}::bigint[]) OR (ep.id = ANY(${failed}::bigint[]) AND ep.failing_since <= ${streakStart}))
    RETURNING ep.id, ep.account_id, ep.url, a.email, CASE WHEN ep.id = ANY(${gone}::bigint[]) THEN 'gone' ELSE 'failing' END AS reason`.execute(
    trx,
  );
  return rows;
}

/**
 * When the worker should look again: the earliest time an enabled endpoint has a due message
 * and no live lease (an endpoint another run holds is due when its lease ends, at the latest).
 */
export async function findNextDueAt(db: Executor): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`
    SELECT min(greatest(f.due, ep.lease_until)) AS at FROM webhook_endpoints ep CROSS JOIN LATERAL (SELECT ${FIRST_DUE} AS due) f
    WHERE ep.status = 'enabled' AND f.due IS NOT NULL`.execute(db);
  return rows[0]?.at ?? null;
}

/**
 * Pending messages already due to enabled endpoints (the metrics' queue depth): those of a
 * disabled endpoint are held, not waiting to be sent, until it is enabled again.
 */
export async function countDueDeliveries(db: Executor, now: Date): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
    WHERE ep.status = 'enabled' AND d.status = 'pending' AND d.next_attempt_at <= ${now}`.execute(db);
  return rows[0]!.n;
}

export async function countDisabledEndpoints(db: Executor): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE status = 'disabled'`.execute(db);
  return rows[0]!.n;
}
