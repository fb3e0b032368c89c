import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { createLogger } from './logger.ts';
import { systemClock } from './lib/clock.ts';
import { openRuntime } from './runtime.ts';
import { buildApp } from './app.ts';
import { startWorker } from './jobs/worker.ts';
import { createJobModules } from './jobs/modules.ts';
import { requeueUnsentMail } from './modules/mail/jobs.ts';
import type { CommandContext } from './cli.ts';

/**
 * `regwatch serve`: the API, the workers and the scheduler, as ROLE says. Shutdown on SIGINT or
 * SIGTERM is graceful: the HTTP server stops accepting and finishes in-flight requests, the
 * worker finishes running jobs, then the database (and an embedded cluster) is let go.
 */
export async function serveCommand({ config }: CommandContext): Promise<number> {
  const logger = createLogger(config.logLevel);
  const started = Date.now();
  const runtime = await openRuntime(config, logger, { poolSize: 20 });
  const db = runtime.database.db;
  let app: FastifyInstance | null = null;
  let runner: Runner | null = null;
  let redis: Redis | null = null;
  let closeJobs = () => {};
  let demo: Promise<void> | null = null;

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    const hardStop = setTimeout(() => {
      logger.error('graceful shutdown took over 30 s; exiting');
      process.exit(1);
    }, 30_000);
    hardStop.unref();
    try {
      await app?.close();
      await demo;
      await runner?.stop();
      closeJobs();
      redis?.disconnect();
      await runtime.close();
    } catch (e) {
      logger.error({ err: e }, 'error during shutdown');
    }
    clearTimeout(hardStop);
    logger.info('stopped');
  };
  let stopping: Promise<void> | null = null;
  const done = new Promise<void>((resolve) => {
    const onSignal = (sig: string) => {
      stopping ??= shutdown(sig).then(resolve);
    };
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
  });

  try {
    if (config.role === 'all' || config.role === 'worker') {
      const jobs = createJobModules({ config, db, logger, clock: systemClock });
      closeJobs = jobs.close;
      runner = await startWorker({ pool: runtime.database.pool, logger, modules: jobs.modules });
      if (config.smtpUrl) {
        const n = await requeueUnsentMail(db);
        if (n > 0) logger.info({ count: n }, 'queued unsent mail from the outbox');
      }
      logger.info('worker started');
    }
    if (config.role === 'all' || config.role === 'api') {
      if (config.redisUrl) redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
      app = await buildApp({ config, db, logger, clock: systemClock, redis: redis ?? undefined });
      await app.listen({ port: config.port, host: config.host });
      logger.info({ url: config.publicBaseUrl, docs: `${config.publicBaseUrl}/docs`, startup_ms: Date.now() - started }, 'regwatch is ready');
    }
    if (runtime.embedded && config.demoCompanies > 0 && config.role !== 'api') {
      // The API answers while the demo registry loads (it is resumable, so a stop midway is harmless).
      const { ensureDemoData } = await import('./registry/demo.ts');
      demo = ensureDemoData(runtime).then(() => undefined, (e) => logger.error({ err: e }, 'loading demo data failed'));
    }
  } catch (e) {
    await shutdown('startup-failure');
    throw e;
  }
  await done;
  return 0;
}
