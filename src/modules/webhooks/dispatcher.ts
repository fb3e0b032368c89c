import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { addJob } from '../../jobs/queue.ts';
import { enqueueMail } from '../mail/outbox.ts';
import type { Sender } from './delivery.ts';
import { listenForEndpointChanges } from './endpoint-changes.ts';
import {
  acquireEndpoints,
  findNextDueAt,
  readDueDeliveries,
  recordAttempts,
  renewEndpoints,
  type DisabledEndpoint,
  type DueDelivery,
  type RecordedAttempt,
} from './dispatch-repo.ts';
import { attemptOutcomes, attemptSeconds, endpointsDisabled } from './metrics.ts';
import { signatureHeaders } from './signing.ts';

export const DELIVER_TASK = 'webhooks.deliver';

export interface DispatcherOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  sender: Sender;
  /** Seconds after each failed attempt (the last entry spent: failed). */
  retrySchedule: readonly number[];
  /** Attempts in flight in this dispatcher run. */
  concurrency: number;
  /** Attempts in flight per endpoint (an endpoint is sent to by one run at a time). */
  perEndpoint: number;
  /** How long a run holds an endpoint without renewing; longer than an attempt can take. */
  leaseMs: number;
  /** Endpoints one run holds at most (the rest are left to other runs). */
  maxEndpoints?: number;
}

/** A payload written by json_build_object (`"key" : value`), before the fan-out wrote compact JSON. */
const SPACED_PAYLOAD = /^\{"[^"]*" : /;

/**
 * The body of a message: `{type, timestamp, data}`, `data` being the stored payload's text as it
 * is (the fan-out writes it compact, with `to_json`), so a body costs no parse and no
 * re-serialisation. A payload stored in the older spaced form is re-serialised as it always was,
 * so its body stays byte-for-byte what earlier attempts sent.
 */
export function messageBody(type: string, createdAt: Date, payload: string): string {
  if (SPACED_PAYLOAD.test(payload))
    return JSON.stringify({ type, timestamp: createdAt.toISOString(), data: JSON.parse(payload) as unknown });
  return `{"type":${JSON.stringify(type)},"timestamp":"${createdAt.toISOString()}","data":${payload}}`;
}

/** The public webhook-id of a delivery. */
export const messageId = (deliveryId: string) => `msg_${deliveryId}`;

const MAX_RETRY_AFTER_S = 86_400;
/**
 * Outcomes are recorded in batches of up to FLUSH_EVERY, at least every FLUSH_MS while attempts
 * are in flight (at once when none is). The statement costs PostgreSQL about 16 µs a message in
 * batches of 90 and 10-12 in batches of 450 (planning and the endpoints' update are per statement):
 * 200 ms makes busy batches of a few hundred instead of about 90 at 50 ms.
 */
const FLUSH_EVERY = 500;
const FLUSH_MS = 200;
/** Tries at recording a batch of outcomes, RECORD_RETRY_MS × the try apart. */
const RECORD_TRIES = 4;
const RECORD_RETRY_MS = 250;
/** The loop's longest sleep (it wakes at once when an attempt or a flush ends). */
const LOOP_MS = 50;
/** How often a busy run looks for more endpoints with due messages. */
const ACQUIRE_MS = 200;
/** A lease is renewed once this much of it has passed; an attempt starts only with twice this much gone at most. */
const RENEW_AFTER_MS = 5_000;
/**
 * Endpoints one run holds by default: enough for every endpoint with a day's messages on a
 * service of a thousand endpoints, so that the oldest messages go first across all of them.
 */
const MAX_ENDPOINTS = 1024;
/** How often a busy run reads more messages for the endpoints whose read-ahead is spent. */
const REFILL_MS = 25;
/** Messages read ahead per endpoint, in multiples of its concurrency. */
const READ_PER_ENDPOINT = 4;

/**
 * Queues a dispatcher run at `at` (now when absent); runs asked for the same second collapse into
 * one job. Ahead of other due jobs (priority -1; graphile-worker takes the lowest first): when a
 * run ends, its fan-out jobs all fall due at once, and a dispatcher run queued behind them started
 * only once every one of them had a slot, 1.4 s after the run on a day of 100,000 messages.
 * A process runs one dispatcher run at a time (jobs.ts), so it holds one slot at most.
 */
const DISPATCH_PRIORITY = -1;

export async function queueDispatch(db: Parameters<typeof addJob>[0], at?: Date): Promise<void> {
  const key = at ? `${DELIVER_TASK}:${Math.ceil(at.getTime() / 1000)}` : DELIVER_TASK;
  await addJob(db, DELIVER_TASK, {}, { jobKey: key, runAt: at, maxAttempts: 5, priority: DISPATCH_PRIORITY });
}

function describeDisabling(e: DisabledEndpoint): { subject: string; text: string } {
  const why = e.reason === 'gone' ? 'it answered 410 Gone' : 'every attempt to deliver to it failed for 5 days';
  return {
    subject: 'A webhook endpoint was disabled',
    text:
      `Your webhook endpoint ep_${e.id} (${e.url}) was disabled because ${why}.\n\n` +
      'Nothing more is sent to it until you enable it again (PATCH /api/v1/webhooks/{id} with {"status": "enabled"}).\n' +
      'The events it missed can be sent again with POST /api/v1/webhooks/{id}/replay, or read from the feed with after_id.\n',
  };
}

/** An endpoint this run holds: its messages read and not yet sent, and its attempts not yet recorded. */
interface Held {
  id: string;
  leaseUntil: number;
  queue: DueDelivery[];
  inFlight: number;
  /** Attempts finished whose outcome is not recorded yet. */
  unrecorded: number;
  /** The last read found fewer due messages than it asked for. */
  drained: boolean;
  /** Disabled (410, or lost its lease): nothing more is sent to it in this run. */
  stopped: boolean;
  /** In the run's heap of endpoints with queued messages (startAttempts). */
  inHeap: boolean;
}

/**
 * One run of the delivery worker: takes endpoints with due messages for a lease, reads their due
 * messages in bulk, sends them (at most `concurrency` in flight, `perEndpoint` per endpoint),
 * records outcomes in batches (in the background, one batch at a time), gives back an endpoint
 * once nothing of it is due and every attempt of it is recorded, and ends when it holds none,
 * after queueing a run for the next due time. Safe to run in several processes at once: an
 * endpoint is held by one run at a time, and only while its lease outlasts an attempt.
 */
export async function runDispatcher(o: DispatcherOptions): Promise<{ attempted: number }> {
  return startDispatcherRun(o).done;
}

/** A dispatcher run under way: `poke()` makes it look for due messages at once; false once it has stopped looking (start another). */
export interface DispatcherRun {
  poke(): boolean;
  done: Promise<{ attempted: number }>;
}

export function startDispatcherRun(o: DispatcherOptions): DispatcherRun {
  let looking = true;
  let poked = false;
  let pokeLoop = () => {};
  const done = dispatch(o, {
    takePoke: () => {
      const p = poked;
      poked = false;
      return p;
    },
    setWake: (wake) => (pokeLoop = wake),
    stopLooking: () => (looking = false),
  });
  return {
    poke() {
      if (!looking) return false;
      poked = true;
      pokeLoop();
      return true;
    },
    done,
  };
}

interface RunControl {
  /** Whether the run was poked since the last call. */
  takePoke(): boolean;
  setWake(wake: () => void): void;
  /** Called once the run will not look for due messages again. */
  stopLooking(): void;
}

async function dispatch(o: DispatcherOptions, control: RunControl): Promise<{ attempted: number }> {
  const owner = randomUUID();
  const maxEndpoints = o.maxEndpoints ?? MAX_ENDPOINTS;
  const renewAfter = Math.min(RENEW_AFTER_MS, o.leaseMs / 4);
  const held = new Map<string, Held>();
  /**
   * The held endpoints with queued messages, by the id of their queue's head, the smallest first
   * (kept across passes; an endpoint stopped meanwhile is dropped when it comes up).
   */
  const heap = createEndpointHeap();
  /** Attempts in flight: message id → endpoint id. */
  const inFlightIds = new Map<string, string>();
  let pending: RecordedAttempt[] = [];
  let recording: RecordedAttempt[] = [];
  let flushing: Promise<void> | null = null;
  let flushError: unknown = null;
  let lastFlush = Date.now();
  let lastAcquire = 0;
  let lastRefill = 0;
  let attempted = 0;

  // The loop sleeps until an attempt or a flush ends (or a moment passes). A wake-up is taken in
  // the event loop's next check phase, so the attempts that end in one poll phase (often dozens at
  // a busy endpoint set) cost one pass of the loop, not one each.
  let woken = false;
  let wakeUp: (() => void) | null = null;
  let wakeQueued = false;
  const wake = () => {
    woken = true;
    if (wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      wakeUp?.();
    });
  };
  control.setWake(wake);
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) return resolve();
      const timer = setTimeout(() => wakeUp?.(), ms);
      wakeUp = () => {
        clearTimeout(timer);
        wakeUp = null;
        resolve();
      };
    }).finally(() => {
      woken = false;
    });

  /** Nothing of it in memory, and nothing more to read: to be given back once its attempts are recorded. */
  const idle = (e: Held) => e.inFlight === 0 && (e.stopped || (e.drained && e.queue.length === 0));

  const flush = async () => {
    const batch = pending;
    pending = [];
    recording = batch;
    lastFlush = Date.now();
    // Endpoints with nothing in memory and nothing due are given back in the same statement,
    // once every attempt of theirs is in this batch; they leave `held` now.
    const counted = new Map<string, number>();
    for (const a of batch) counted.set(a.endpointId, (counted.get(a.endpointId) ?? 0) + 1);
    const release: string[] = [];
    for (const e of held.values()) {
      if (idle(e) && e.unrecorded === (counted.get(e.id) ?? 0)) {
        release.push(e.id);
        held.delete(e.id);
      }
    }
    for (const [id, n] of counted) {
      const e = held.get(id);
      if (e) e.unrecorded -= n;
    }
    if (batch.length === 0 && release.length === 0) return;
    const now = o.clock.now();
    const ids = { owner, ids: release };
    const record = async (): Promise<DisabledEndpoint[]> => {
      if (batch.every((a) => a.ok)) return recordAttempts(o.db, batch, now, ids);
      return o.db.transaction().execute(async (trx) => {
        const disabled = await recordAttempts(trx, batch, now, ids);
        for (const e of disabled) {
          // Nothing more to it from this run, as after a 410: the messages read ahead stay pending,
          // their attempts uncounted, for the day it is enabled again.
          const h = held.get(e.id);
          if (h) {
            h.stopped = true;
            h.queue = [];
          }
          if (e.reason === 'failing') await enqueueMail(trx, { kind: 'webhook_disabled', to: e.email, ...describeDisabling(e) });
        }
        return disabled;
      });
    };
    // A record that fails is made again (a deadlock with a replay or an unwatch updating the same
    // rows, a dropped connection). Given up at once, the batch's outcomes were lost: the run
    // ended, and the next one sent its messages again, those answered 2xx too. Made again after a
    // commit whose answer was lost, it changes nothing: the outcomes no longer match their rows
    // (attempts, due time), and a disabled endpoint is not disabled or mailed twice.
    let disabled: DisabledEndpoint[];
    for (let tried = 1; ; tried++) {
      try {
        disabled = await record();
        break;
      } catch (err) {
        if (tried >= RECORD_TRIES) throw err;
        o.logger.warn({ err, tried }, 'webhook outcomes not recorded; trying again');
        await new Promise((r) => setTimeout(r, RECORD_RETRY_MS * tried));
      }
    }
    for (const e of disabled) {
      endpointsDisabled.inc({ reason: e.reason });
      o.logger.warn({ endpoint: `ep_${e.id}`, reason: e.reason }, 'webhook endpoint disabled');
    }
    recording = [];
  };
  const startFlush = () => {
    flushing = flush()
      .catch((err: unknown) => {
        flushError = err;
      })
      .finally(() => {
        flushing = null;
        wake();
      });
  };

  const renew = async () => {
    const now = o.clock.now();
    const until = now.getTime() + o.leaseMs;
    const kept = new Map(
      (await renewEndpoints(o.db, { owner, ids: [...held.keys()], leaseUntil: new Date(until), now })).map((r) => [r.id, r]),
    );
    for (const e of held.values()) {
      const current = kept.get(e.id);
      if (current === undefined) {
        e.stopped = true; // disabled, deleted, or (after a long stall) taken by another run
        e.queue = [];
      } else {
        e.leaseUntil = until;
        // A re-pointed endpoint, or a rotated secret (service.ts notifies both): the messages read
        // ahead go to the new URL, signed by the new secret beside the old.
        for (const d of e.queue) {
          d.url = current.url;
          d.secrets = current.secrets;
        }
      }
    }
  };

  const acquire = async () => {
    lastAcquire = Date.now();
    const now = o.clock.now();
    const until = now.getTime() + o.leaseMs;
    const got = await acquireEndpoints(o.db, { owner, now, leaseUntil: new Date(until), limit: maxEndpoints - held.size });
    for (const r of got)
      held.set(r.id, { id: r.id, leaseUntil: until, queue: [], inFlight: 0, unrecorded: 0, drained: false, stopped: false, inHeap: false });
    return got.length;
  };

  // Reads due messages for the endpoints short of them, once the run as a whole runs short: one
  // query for many endpoints (a read costs about as much for one message as for hundreds).
  const refill = async () => {
    lastRefill = Date.now();
    const short = [...held.values()].filter((e) => !e.stopped && !e.drained && e.queue.length < o.perEndpoint);
    if (short.length === 0) return;
    const want = short.map((e) => ({ endpointId: e.id, count: READ_PER_ENDPOINT * o.perEndpoint - e.queue.length }));
    // Messages of theirs this run already has (queued, in flight, outcome not recorded) are left
    // out; only those of the endpoints read (the others' cannot match).
    const reading = new Set(short.map((e) => e.id));
    const exclude: string[] = [];
    for (const [id, endpointId] of inFlightIds) if (reading.has(endpointId)) exclude.push(id);
    for (const a of pending) if (reading.has(a.endpointId)) exclude.push(a.id);
    for (const a of recording) if (reading.has(a.endpointId)) exclude.push(a.id);
    for (const e of short) for (const d of e.queue) exclude.push(d.id);
    const rows = await readDueDeliveries(o.db, { owner, now: o.clock.now(), want, held: exclude });
    const got = new Map<string, number>();
    for (const d of rows) {
      const e = held.get(d.endpoint_id);
      if (!e || e.stopped) continue;
      e.queue.push(d);
      got.set(d.endpoint_id, (got.get(d.endpoint_id) ?? 0) + 1);
    }
    for (const w of want) {
      const e = held.get(w.endpointId);
      if (!e) continue;
      if ((got.get(w.endpointId) ?? 0) < w.count) e.drained = true;
      if (!e.inHeap && !e.stopped && e.queue.length > 0) heap.push(e);
    }
  };

  const attempt = async (e: Held, d: DueDelivery) => {
    const at = o.clock.now();
    const body = messageBody(d.event_type, d.created_at, d.payload);
    const r = await o.sender.send(d.url, signatureHeaders(d.secrets, messageId(d.id), at, body), body, at);
    attemptSeconds.observe(r.seconds);
    const gone = r.status === 410;
    attemptOutcomes.inc({
      outcome: r.ok
        ? 'delivered'
        : gone
          ? 'gone'
          : r.error?.startsWith('No answer')
            ? 'timeout'
            : r.error?.includes('BLOCKED') || r.error?.includes('not a public')
              ? 'blocked'
              : 'failed',
    });
    // The schedule counts from the attempt's end: after a 15-second timeout, "5 s" is 5 s after it.
    const ended = o.clock.now();
    let nextAttemptAt: Date | null = null;
    const made = d.attempts + 1;
    // A 410 keeps the message's schedule too: the endpoint is disabled (nothing goes to it), and
    // enabling it again sends the message that met the 410 with the others it holds.
    if (!r.ok && made <= o.retrySchedule.length) {
      const wait = r.retryAfter !== null ? Math.min(r.retryAfter, MAX_RETRY_AFTER_S) : o.retrySchedule[made - 1]!;
      nextAttemptAt = new Date(ended.getTime() + wait * 1000);
    }
    if (gone) {
      e.stopped = true; // 410: nothing more to it, even before the disabling is recorded
      e.queue = [];
    }
    e.unrecorded++;
    pending.push({
      id: d.id,
      endpointId: d.endpoint_id,
      ok: r.ok,
      gone,
      status: r.status,
      error: r.error,
      body: r.body,
      nextAttemptAt,
      attemptsBefore: d.attempts,
      dueBefore: d.next_attempt_at,
      at,
      endedAt: ended,
    });
  };

  // Starts attempts while slots are free, the oldest message first across the endpoints held
  // (message ids follow the events' order): the delay of the oldest events is what a backlog
  // makes long, and a round of every endpoint in turn would send each one's last events before
  // another's first. (An endpoint whose read-ahead is spent is read again within REFILL_MS; reading
  // it before every younger message went cost a read a pass, half as much CPU again a delivery.)
  // A pass costs the attempts it starts, not the endpoints held: the heap is kept between passes,
  // and an endpoint that cannot take an attempt now (its slots full, its lease due for renewal) is
  // set aside for the pass.
  const startAttempts = () => {
    const now = o.clock.now().getTime();
    // An attempt starts only while the lease outlasts it by a margin (renew() runs first otherwise).
    const leaseOk = (e: Held) => e.leaseUntil - now >= o.leaseMs - 2 * renewAfter;
    const aside: Held[] = [];
    while (inFlightIds.size < o.concurrency && heap.size() > 0) {
      const e = heap.pop()!;
      if (e.stopped || e.queue.length === 0) continue;
      if (e.inFlight >= o.perEndpoint || !leaseOk(e)) {
        aside.push(e);
        continue;
      }
      const d = e.queue.shift()!;
      e.inFlight++;
      inFlightIds.set(d.id, e.id);
      attempted++;
      if (e.queue.length > 0) heap.push(e);
      attempt(e, d)
        .catch((err: unknown) => o.logger.error({ err, delivery: d.id }, 'webhook attempt failed unexpectedly'))
        .finally(() => {
          e.inFlight--;
          inFlightIds.delete(d.id);
          wake();
        });
    }
    for (const e of aside) heap.push(e);
  };

  // An endpoint deleted, disabled or re-pointed meanwhile: the leases are renewed at the next pass.
  // Its messages read ahead are read again too: some may have stopped (a company unwatched).
  let endpointsChanged = false;
  /** The endpoints notified since the last pass (null: every one, the notices may have been lost). */
  let changed: Set<string> | null = new Set();
  const stopListening = await listenForEndpointChanges(
    o.db,
    (endpointId) => {
      endpointsChanged = true;
      if (endpointId === null) changed = null;
      else changed?.add(endpointId);
      wake();
    },
    o.logger,
  );
  try {
    for (;;) {
      if (flushError !== null) throw flushError;
      const now = o.clock.now().getTime();
      let queued = 0;
      let renewDue = endpointsChanged;
      endpointsChanged = false;
      const reread = changed === null ? [...held.keys()] : [...changed];
      changed = new Set();
      for (const e of held.values()) {
        queued += e.queue.length;
        if (!e.stopped && now - (e.leaseUntil - o.leaseMs) >= renewAfter) renewDue = true;
      }
      if (renewDue) await renew();
      // What a notified endpoint's queue holds may be older than the change (read by a refill
      // under way as it committed): read again, after the change, rather than sent.
      for (const id of reread) {
        const e = held.get(id);
        if (e === undefined) continue;
        e.queue = [];
        e.drained = false;
      }
      let found = -1;
      // Endpoints are taken while there is room, not only once the run runs short of messages:
      // the oldest messages are sent first only among the endpoints held. A poke (new messages)
      // looks at once.
      const poked = control.takePoke();
      // New messages may be for endpoints this run holds, whose last read found nothing more and
      // that still have attempts in flight or messages queued: they are read again, rather than
      // waiting until the endpoint is given back (up to an attempt's 15 s when one hangs). An idle
      // one is given back at the next flush and taken again with its new messages.
      if (poked) for (const e of held.values()) if (e.drained && !idle(e)) e.drained = false;
      if (held.size < maxEndpoints && (poked || held.size === 0 || Date.now() - lastAcquire >= ACQUIRE_MS)) found = await acquire();
      // Refilled at once when the run runs short, and every REFILL_MS otherwise: an endpoint whose
      // read-ahead is spent may hold the oldest messages still unread.
      if (queued < o.concurrency || Date.now() - lastRefill >= REFILL_MS) await refill();
      // A change notified while this pass waited on the database (the renewal's answer may predate
      // it) is renewed for first, at the next pass: an endpoint deleted or disabled would otherwise
      // get the attempts started here, after its DELETE or PATCH had answered.
      if (!endpointsChanged) startAttempts();
      if (
        flushing === null &&
        (pending.length > 0 || [...held.values()].some(idle)) &&
        (pending.length >= FLUSH_EVERY || Date.now() - lastFlush >= FLUSH_MS || inFlightIds.size === 0)
      )
        startFlush();
      // A poke taken after this check finds the run no longer looking (finally, at once): its job starts another.
      if (held.size === 0 && inFlightIds.size === 0 && pending.length === 0 && flushing === null && found === 0 && !control.takePoke())
        break;
      await sleep(LOOP_MS);
    }
  } finally {
    control.stopLooking();
    await stopListening();
    while (inFlightIds.size > 0 || flushing !== null) await sleep(LOOP_MS);
    if (pending.length > 0 || held.size > 0) {
      for (const e of held.values()) e.stopped = true;
      await flush().catch((err: unknown) => o.logger.error({ err }, 'webhook outcomes not recorded'));
    }
  }

  const next = await findNextDueAt(o.db);
  if (next !== null) {
    const soonest = new Date(o.clock.now().getTime() + 1000);
    await queueDispatch(o.db, next < soonest ? soonest : next);
  }
  return { attempted };
}

/**
 * Held endpoints by the id of the message at the head of their queue, the smallest first: a
 * binary heap, from which the few dozen attempts a pass starts each take the oldest message left.
 * The ids are compared as numbers, parsed once when the message is read (`DueDelivery.order`).
 * An endpoint's key is its head when pushed: it is popped before its head is taken, and its queue
 * only grows at the tail otherwise (or is emptied when it stops, which the pass checks).
 * `inHeap` says whether an endpoint is in it.
 */
function createEndpointHeap() {
  const items: Held[] = [];
  const keys: number[] = [];
  const place = (i: number, key: number, item: Held) => {
    keys[i] = key;
    items[i] = item;
  };
  return {
    size: () => items.length,
    push(e: Held) {
      e.inHeap = true;
      const key = e.queue[0]!.order;
      let i = items.length;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (keys[parent]! <= key) break;
        place(i, keys[parent]!, items[parent]!);
        i = parent;
      }
      place(i, key, e);
    },
    pop(): Held | undefined {
      if (items.length === 0) return undefined;
      const top = items[0]!;
      top.inHeap = false;
      const key = keys.pop()!;
      const item = items.pop()!;
      const n = items.length;
      if (n > 0) {
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= n) break;
          const m = l + 1 < n && keys[l + 1]! < keys[l]! ? l + 1 : l;
          if (keys[m]! >= key) break;
          place(i, keys[m]!, items[m]!);
          i = m;
        }
        place(i, key, item);
      }
      return top;
    },
  };
}
