/**
 * A worker process for test/watchlist-kill.test.ts: the real watchlist job module on
 * graphile-worker against the test's database and KRS fixture server, until it is killed.
 */
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { compose } from '../src/composition.ts';

const config = loadConfig({
  DATABASE_URL: process.env.WORKER_DATABASE_URL,
  REGISTRY_SOURCES: 'krs',
  KRS_API_URL: process.env.WORKER_KRS_API_URL,
  LOG_LEVEL: 'warn',
});
const handle = createDatabase(config.databaseUrl!, { max: 3 });
const logger = pino({ level: 'warn' });
const parts = compose({ config, db: handle.db, logger, clock: systemClock });
await startWorker({ pool: handle.pool, logger, modules: [parts.modules.watchlist.jobs], concurrency: 1, pollInterval: 100 });
process.stdout.write('worker ready\n');
