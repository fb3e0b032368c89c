/**
 * A worker process for test/jobs-recovery.test.ts: one task that holds its job until the process
 * is killed, on graphile-worker against the test's database.
 */
import pino from 'pino';
import { createDatabase } from '../src/db/database.ts';
import { startWorker } from '../src/jobs/worker.ts';

const handle = createDatabase(process.env.WORKER_DATABASE_URL!, { max: 3 });
await startWorker({
  pool: handle.pool,
  logger: pino({ level: 'warn' }),
  modules: [{
    tasks: {
      'test.hold': async (_payload, helpers) => {
        process.stdout.write(`holding ${helpers.job.id}\n`);
        await new Promise(() => {});
      },
    },
  }],
  concurrency: 1,
  pollInterval: 100,
});
process.stdout.write('worker ready\n');
