import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { addJob } from '../../jobs/queue.ts';
import { enqueueMail } from '../mail/outbox.ts';
import type { Sender } from './delivery.ts';
import { attemptOutcomes, attemptSeconds, endpointsDisabled } from './metrics.ts';
import { claimDueDeliveries, findNextDueAt, findSigningSecrets, recordAttempts, type ClaimedDelivery, type DisabledEndpoint, type RecordedAttempt } from './repo.ts';
import { signatureHeaders } from './signing.ts';

export const DELIVER_TASK = 'webhooks.deliver';

export interface DispatcherOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  sender: Sender;
  /** Seconds after each failed attempt (the last entry spent: failed). */
  retrySchedule: readonly number[];
  /** Attempts in flight in this dispatcher. */
  concurrency: number;
  /** Attempts in flight per endpoint, across every worker. */
  perEndpoint: number;
  /** How long a claimed message is this worker's; longer than an attempt can take. */
  leaseMs: number;
}

/** The public webhook-id of a delivery. */
export const messageId = (deliveryId: string) => `msg_${deliveryId}`;

const MAX_RETRY_AFTER_S = 86_400;
const FLUSH_EVERY = 200;
const FLUSH_MS = 50;

/** Queues a dispatcher run at `at` (now when absent); runs asked for the same second collapse into one job. */
export async function queueDispatch(db: Parameters<typeof addJob>[0], at?: Date): Promise<void> {
  const key = at ? `${DELIVER_TASK}:${Math.ceil(at.getTime() / 1000)}` : DELIVER_TASK;
  await addJob(db, DELIVER_TASK, {}, { jobKey: key, runAt: at, maxAttempts: 5 });
}

function describeDisabling(e: DisabledEndpoint): { subject: string; text: string } {
  const why = e.reason === 'gone' ? 'it answered 410 Gone' : 'every attempt to deliver to it failed for 5 days';
  return {
    subject: 'A webhook endpoint was disabled',
    text: `Your webhook endpoint ep_${e.id} (${e.url}) was disabled because ${why}.\n\n`
      + 'Nothing more is sent to it until you enable it again (PATCH /api/v1/webhooks/{id} with {"status": "enabled"}).\n'
      + 'The events it missed can be sent again with POST /api/v1/webhooks/{id}/replay, or read from the feed with after_id.\n',
  };
}

/**
 * One run of the delivery worker: claims due messages in batches, sends them with bounded
 * concurrency, records outcomes in batches, and ends when nothing is due, after queueing a run
 * for the next due time. Safe to run in several processes at once (the claim is exclusive).
 */
export async function runDispatcher(o: DispatcherOptions): Promise<{ attempted: number }> {
  const inFlight = new Set<Promise<void>>();
  let pending: RecordedAttempt[] = [];
  let lastFlush = Date.now();
  let attempted = 0;

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    lastFlush = Date.now();
    const now = o.clock.now();
    await o.db.transaction().execute(async (trx) => {
      const disabled = await recordAttempts(trx, batch, now);
      for (const e of disabled) {
        endpointsDisabled.inc({ reason: e.reason });
        if (e.reason === 'failing') await enqueueMail(trx, { kind: 'webhook_disabled', to: e.email, ...describeDisabling(e) });
        o.logger.warn({ endpoint: `ep_${e.id}`, reason: e.reason }, 'webhook endpoint disabled');
      }
    });
  };

  const attempt = async (d: ClaimedDelivery, secrets: string[]) => {
    const at = o.clock.now();
    const body = JSON.stringify({ type: d.event_type, timestamp: d.created_at.toISOString(), data: JSON.parse(d.payload) as unknown });
    const r = await o.sender.send(d.url, signatureHeaders(secrets, messageId(d.id), at, body), body, at);
    attemptSeconds.observe(r.seconds);
    const gone = r.status === 410;
    attemptOutcomes.inc({ outcome: r.ok ? 'delivered' : gone ? 'gone' : r.error?.startsWith('No answer') ? 'timeout' : r.error?.includes('BLOCKED') || r.error?.includes('not a public') ? 'blocked' : 'failed' });
    let nextAttemptAt: Date | null = null;
    if (!r.ok && !gone && d.attempts <= o.retrySchedule.length) {
      const wait = r.retryAfter !== null ? Math.min(r.retryAfter, MAX_RETRY_AFTER_S) : o.retrySchedule[d.attempts - 1]!;
      nextAttemptAt = new Date(at.getTime() + wait * 1000);
    }
    pending.push({ id: d.id, endpointId: d.endpoint_id, ok: r.ok, gone, status: r.status, error: r.error, body: r.body, nextAttemptAt, at });
  };

  for (;;) {
    const room = o.concurrency - inFlight.size;
    let claimed: ClaimedDelivery[] = [];
    if (room >= o.concurrency / 2) {
      const now = o.clock.now();
      claimed = await claimDueDeliveries(o.db, { now, leaseUntil: new Date(now.getTime() + o.leaseMs), limit: Math.min(room, 100), perEndpoint: o.perEndpoint, scan: 2000 });
      if (claimed.length > 0) {
        const secrets = await findSigningSecrets(o.db, [...new Set(claimed.map((d) => d.endpoint_id))], now);
        for (const d of claimed) {
          attempted++;
          const p: Promise<void> = attempt(d, secrets.get(d.endpoint_id) ?? [])
            .catch((e: unknown) => o.logger.error({ err: e, delivery: d.id }, 'webhook attempt failed unexpectedly'))
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
      }
    }
    if (claimed.length === 0 && inFlight.size === 0) break;
    // Claim again only once half the slots are free: a claim costs about as much for 1 row as for 50.
    if (claimed.length === 0 || inFlight.size > o.concurrency / 2) {
      await Promise.race([...inFlight, new Promise((r) => setTimeout(r, FLUSH_MS))]);
    }
    if (pending.length >= FLUSH_EVERY || Date.now() - lastFlush >= FLUSH_MS) await flush();
  }
  await flush();

  const next = await findNextDueAt(o.db);
  if (next !== null) {
    const soonest = new Date(o.clock.now().getTime() + 1000);
    await queueDispatch(o.db, next < soonest ? soonest : next);
  }
  return { attempted };
}
