import type { Task } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { JobModule } from '../../jobs/queue.ts';
import { isIsoDate } from '../../lib/dates.ts';
import type { Sender } from './delivery.ts';
import { DELIVER_TASK, queueDispatch, startDispatcherRun, type DispatcherRun } from './dispatcher.ts';
import { lockEventsWriter } from '../../registry/store.ts';
import { fanOutEvents, forgetFanOutHold } from './repo.ts';

/**
 * Queued by the trigger on `events` (migration 20261125000100_webhooks) in the events' own transaction;
 * while their run is running, held until it ends (migrations 20261201000100_webhook_fanout_holds,
 * 20261204000100_webhook_fanout_holds_without_endpoints).
 */
export const FANOUT_TASK = 'webhooks.fanout';

/** Every minute: a dispatcher run, should a run have died with no successor queued. */
export const SWEEP_TASK = 'webhooks:sweep';

export interface FanoutPayload {
  from_id: number;
  to_id: number;
  from_date: string;
  to_date: string;
}

function parseFanoutPayload(p: unknown): FanoutPayload {
  const o = p as Partial<FanoutPayload> | null;
  if (
    !o ||
    !Number.isSafeInteger(o.from_id) ||
    !Number.isSafeInteger(o.to_id) ||
    o.from_id! > o.to_id! ||
    typeof o.from_date !== 'string' ||
    !isIsoDate(o.from_date) ||
    typeof o.to_date !== 'string' ||
    !isIsoDate(o.to_date)
  ) {
    throw new Error(`${FANOUT_TASK}: invalid payload ${JSON.stringify(p)}`);
  }
  return o as FanoutPayload;
}

export interface WebhookJobDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  sender: Sender;
  retrySchedule: readonly number[];
  concurrency: number;
  perEndpoint: number;
  leaseMs: number;
}

export function createWebhookJobs(deps: WebhookJobDeps): JobModule {
  const fanout: Task = async (payload, helpers) => {
    const p = parseFanoutPayload(payload);
    // The trigger names the job by its range and holds it under that name; the name is read back
    // from the job rather than built again here.
    const jobKey = helpers.job.key;
    // The messages and the run that sends them commit together. A range with messages already
    // (the job run again after a commit whose completion was lost, or a replay that queued some of
    // its events first) fails the plain INSERT and goes again, inserting only the missing ones.
    const fanOut = (again: boolean) =>
      deps.db.transaction().execute(async (trx) => {
        // A watch holds the events writer's lock while it decides which events to push itself and
        // which to leave to a held fan-out (watch-fanout.ts): taken first here, the two never run
        // at once. A watch before this job committed its feed rows before the feed is read below;
        // a watch after it finds the hold gone and pushes its events itself. Without the lock a
        // job that had read the feed but not yet forgotten its hold, and a watch between the two,
        // missed each other: neither sent the watched company's events.
        await lockEventsWriter(trx);
        const n = await fanOutEvents(trx, {
          fromId: p.from_id,
          toId: p.to_id,
          fromDate: p.from_date,
          toDate: p.to_date,
          at: deps.clock.now(),
          again,
        });
        if (jobKey !== null) await forgetFanOutHold(trx, jobKey);
        if (n > 0) await queueDispatch(trx);
      });
    try {
      await fanOut(false);
    } catch (e) {
      if ((e as { code?: string }).code !== '23505') throw e;
      await fanOut(true);
    }
  };
  // One dispatcher run at a time in a process: a job that finds one under way pokes it (it takes
  // the new messages' endpoints at once) instead of starting a second that would send beside it in
  // no common order. Runs in other processes share the work through the endpoints' leases.
  let active: DispatcherRun | null = null;
  const deliver: Task = async () => {
    if (active?.poke()) return;
    if (active) await active.done.catch(() => {});
    if (active?.poke()) return;
    const run = startDispatcherRun(deps);
    active = run;
    try {
      await run.done;
    } finally {
      if (active === run) active = null;
    }
  };
  const sweep: Task = async () => {
    await queueDispatch(deps.db);
  };
  return {
    tasks: { [FANOUT_TASK]: fanout, [DELIVER_TASK]: deliver, [SWEEP_TASK]: sweep },
    crontab: [`* * * * * ${SWEEP_TASK} ?max=1`],
  };
}
