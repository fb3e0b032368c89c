/**
 * A worker process for test/jobs-recovery.test.ts, on graphile-worker against the test's database,
 * until it is killed. WORKER_TASKS=hold: one task that takes its job and holds it;
 * WORKER_TASKS=registry: the registry's job module (the scheduled daily run).
 */
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import type { JobModule } from '../src/jobs/queue.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createRegistryJobs } from '../src/registry/jobs.ts';

const url = process.env.WORKER_DATABASE_URL!;
const handle = createDatabase(url, { max: 4 });
const logger = pino({ level: 'warn' });
const hold: JobModule = {
  tasks: {
    'test.hold': async (_payload, helpers) => {
      process.stdout.write(`holding ${helpers.job.id}\n`);
      await new Promise(() => {});
    },
  },
};
const registry = () =>
  createRegistryJobs({ config: loadConfig({ DATABASE_URL: url, REGISTRY_SOURCES: '' }), db: handle.db, logger, clock: systemClock });
await startWorker({
  pool: handle.pool,
  logger,
  modules: [process.env.WORKER_TASKS === 'registry' ? registry() : hold],
  concurrency: 1,
  pollInterval: 100,
});
process.stdout.write('worker ready\n');
