/**
 * The job worker of bench/webhooks.ts (forked by it), in a process of its own as in production
 * (ROLE=worker beside the process that runs the daily run): graphile-worker with the webhooks
 * module's jobs, fan-out and delivery, on the database of argv[2]. `--nice N` lowers its
 * scheduling priority. Answers `{cmd: 'stats'}` with its CPU microseconds and attempt outcomes.
 */
import { setPriority } from 'node:os';
import pino from 'pino';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { attemptOutcomes } from '../src/modules/webhooks/metrics.ts';
import { createWebhooksModule } from '../src/modules/webhooks/module.ts';

const [url, nice] = [process.argv[2]!, Number(process.argv[3] ?? '0')];
if (nice !== 0) setPriority(nice);
const logger = pino({ level: 'warn' });
// Named, so that bench/webhooks.ts can tell this process's PostgreSQL backends from the daily run's.
const handle = createDatabase(url, { max: 6, applicationName: 'bench-webhooks-worker' });
const module = createWebhooksModule({
  db: handle.db,
  clock: systemClock,
  config: { webhookRetrySchedule: DEFAULT_WEBHOOK_RETRY_SCHEDULE, webhookAllowPrivateUrls: true },
  logger,
});
const runner = await startWorker({ pool: handle.pool, logger, modules: [module.jobs], concurrency: 4, pollInterval: 200 });
process.send!({ ready: true });

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
