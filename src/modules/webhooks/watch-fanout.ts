import { sql, type RawBuilder } from 'kysely';
import { queueDispatch } from './dispatcher.ts';
import { FEED_JSON, UNWATCHED_ERROR, type Executor } from './repo.ts';

export { UNWATCHED_ERROR };

/**
 * Messages for the events a watch brings into an account's feed (DECISIONS 8: "exactly the events
 * the account's feed shows"): a company watched after the run that detected its events of the
 * day (the 03:00 run, a watch added at 10:00) has those events in the feed at once
 * (src/modules/watchlist/repo.ts, watchCompanies), and they are pushed too, in the watch's own
 * transaction, to the account's enabled endpoints whose types match. Unique per endpoint and
 * event (ON CONFLICT DO NOTHING): a company watched again does not get a message it had,
 * delivered or failed, again; but a message its removal stopped (UNWATCHED_ERROR), to any of the
 * account's endpoints, enabled or not, is the feed's again, as its event is (the feed shows the
 * company from the day it was first watched), and goes on where it stopped: pending,
 * its attempts and due time as they were (stopUnwatchedMessages keeps them; due at once if that
 * time has passed). Kept so, an attempt under way through the removal and the watch is
 * recorded as if neither had happened: its message is not sent twice.
 *
 * Events of a run still running are left to that run's held fan-out job (migration
 * 20261201000100_webhook_fanout_holds), which reads the feed when the run ends and finds these
 * rows there: the runs' rows are taken FOR SHARE, so a run's completion waits for this commit, and
 * its released job cannot read the feed before these rows are in it. Only when such a job holds
 * the event: a held job that already ran (its run's process died) forgot its hold, so its events
 * are pushed here, or never. The watch's
 * transaction holds the events writer's lock (watchCompanies), which a fan-out job takes before it
 * reads the feed (jobs.ts): a held job never runs between this statement and the watch's commit.
 */
export async function fanOutWatchStarted(
  trx: Executor,
  accountId: string,
  companyIds: readonly string[],
  fromDate: string,
  at: Date,
): Promise<number> {
  if (companyIds.length === 0) return 0;
  // The messages the companies' removal stopped, of every endpoint of the account (a disabled one
  // keeps its pending messages, so it gets these back too): pending again where they stopped.
  const revived = await sql`
    UPDATE webhook_deliveries d SET status = 'pending', last_error = NULL, next_attempt_at = coalesce(d.next_attempt_at, ${at})
    FROM webhook_endpoints ep, events e
    WHERE ep.account_id = ${accountId} AND e.company_id = ANY(${companyIds}::bigint[]) AND e.event_date >= ${fromDate}::date
      AND d.endpoint_id = ep.id AND d.event_id = e.id AND d.status = 'failed' AND d.last_error = ${UNWATCHED_ERROR}`.execute(trx);
  const result = await sql`
    WITH ep AS MATERIALIZED (
      SELECT id, account_id, event_types FROM webhook_endpoints WHERE account_id = ${accountId} AND status = 'enabled' FOR KEY SHARE
    ), f AS MATERIALIZED (
      SELECT e.id AS event_id, e.event_type, e.event_date, e.company_id, e.run_id FROM events e
      WHERE EXISTS (SELECT 1 FROM ep) AND e.company_id = ANY(${companyIds}::bigint[]) AND e.event_date >= ${fromDate}::date
    ), running AS MATERIALIZED (
      SELECT r.id, r.status FROM daily_runs r WHERE r.id IN (SELECT f.run_id FROM f) FOR SHARE
    )
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, payload, next_attempt_at, created_at)
    SELECT ep.id, ep.account_id, f.event_id, f.event_type, ${FEED_JSON}, ${at}, ${at}
    FROM ep
    JOIN f ON cardinality(ep.event_types) = 0 OR f.event_type = ANY(ep.event_types)
    JOIN events e ON e.event_date = f.event_date AND e.id = f.event_id
    JOIN companies c ON c.id = f.company_id
    WHERE NOT EXISTS (
      SELECT 1 FROM running r JOIN webhook_fanout_holds h ON h.run_id = r.id
      WHERE r.id = f.run_id AND r.status = 'running'
        AND f.event_id BETWEEN (h.payload->>'from_id')::bigint AND (h.payload->>'to_id')::bigint)
    ORDER BY f.event_id, ep.id
    ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING`.execute(trx);
  const n = Number(result.numAffectedRows ?? 0) + Number(revived.numAffectedRows ?? 0);
  if (n > 0) await queueDispatch(trx);
  return n;
}

/**
 * The other side of a watch's end (watchlist/repo.ts, unwatchCompanies): the account's messages
 * still pending for the events that leave its feed (`eventIds`, a query of their ids) are not sent
 * or retried any more, since the feed no longer shows those events. They end `failed` with
 * UNWATCHED_ERROR, kept in the delivery log; messages delivered or failed before stay as they
 * are. An attempt in flight meanwhile is not recorded over it, unless it is a 2xx: that message
 * was delivered (dispatch-repo.ts recordAttempts). Its attempts and due time are kept, for a
 * watch of the company again (fanOutWatchStarted). A statement for the watch's own transaction,
 * to run as a CTE beside it.
 */
export function stopUnwatchedMessages(accountId: string, eventIds: RawBuilder<unknown>): RawBuilder<unknown> {
  // Through the account's endpoints: (endpoint_id, event_id) is a message's unique key, indexed.
  return sql`UPDATE webhook_deliveries d SET status = 'failed', last_error = ${UNWATCHED_ERROR}
    FROM webhook_endpoints ep
    WHERE ep.account_id = ${accountId} AND d.endpoint_id = ep.id AND d.event_id IN (${eventIds}) AND d.status = 'pending'`;
}
