/**
 * The job worker of bench/webhooks.ts (forked by it), in a process of its own as in production
 * (ROLE=worker beside the process that runs the daily run): graphile-worker with the webhooks
 * module's jobs, fan-out and delivery, on the database of argv[2]. argv[3] (N) lowers its
 * scheduling priority to nice N; argv[4] `idle` puts it and its PostgreSQL backends under
 * SCHED_IDLE through the product's own code (src/lib/idle-priority.ts, as WORKER_IDLE_PRIORITY=true
 * does in `regwatch serve`). Answers `{cmd: 'stats'}` with its CPU microseconds, attempt outcomes
 * and whether the process went idle.
 */
import { setPriority } from 'node:os';
import pino from 'pino';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createIdlePriority } from '../src/lib/idle-priority.ts';
import { attemptOutcomes } from '../src/modules/webhooks/metrics.ts';
import { createWebhooksModule } from '../src/modules/webhooks/module.ts';

const [url, nice, idleArg] = [process.argv[2]!, Number(process.argv[3] ?? '0'), process.argv[4]];
if (nice !== 0) setPriority(nice);
const logger = pino({ level: 'warn' });
const idle = idleArg === 'idle' ? createIdlePriority({ logger }) : null;
// Named, so that bench/webhooks.ts can tell this process's PostgreSQL backends from the daily run's.
const handle = createDatabase(url, { max: 6, applicationName: 'bench-webhooks-worker', onConnect: idle?.onConnect });
// As src/server.ts: the process once the database opens.
await handle.db.selectNoFrom((eb) => eb.val(1).as('x')).execute();
const idleProcess = (await idle?.applyToProcess()) ?? false;
const module = createWebhooksModule({
  db: handle.db,
  clock: systemClock,
  config: { webhookRetrySchedule: DEFAULT_WEBHOOK_RETRY_SCHEDULE, webhookAllowPrivateUrls: true },
  logger,
});
const runner = await startWorker({ pool: handle.pool, logger, modules: [module.jobs], concurrency: 4, pollInterval: 200 });
process.send!({ ready: true, idle: idleProcess });

process.on('message', (m: { cmd: string }) => {
  if (m.cmd !== 'stats') return;
  const c = process.cpuUsage();
  void attemptOutcomes
    .get()
    .then((o) => process.send!({ cpu: c.user + c.system, outcomes: Object.fromEntries(o.values.map((v) => [v.labels.outcome, v.value])) }));
});
process.on('disconnect', () => {
  void (async () => {
    await runner.stop();
    await module.close();
    await handle.close();
  })();
});
