/**
 * A worker process for test/webhooks-kill.test.ts: the real webhook job module on graphile-worker
 * against the test's database, until it is stopped or killed.
 */
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { systemClock } from '../src/lib/clock.ts';
import { createWebhooksModule } from '../src/modules/webhooks/module.ts';

const config = loadConfig({
  DATABASE_URL: process.env.WORKER_DATABASE_URL,
  REGISTRY_SOURCES: '',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  LOG_LEVEL: 'warn',
});
const handle = createDatabase(config.databaseUrl!, { max: 4 });
const logger = pino({ level: 'warn' });
const module = createWebhooksModule({
  db: handle.db,
  clock: systemClock,
  config,
  logger,
  attemptTimeoutMs: Number(process.env.WORKER_ATTEMPT_TIMEOUT_MS ?? 2000),
});
await startWorker({ pool: handle.pool, logger, modules: [module.jobs], concurrency: 2, pollInterval: 50 });
process.stdout.write('worker ready\n');
