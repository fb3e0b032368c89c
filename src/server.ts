import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import { Redis } from 'ioredis';
import { buildApp } from './app.ts';
import { databaseHealth } from './http/health.ts';
import { resolveListenPort } from './http/listen-port.ts';
import { createMetricsRegistry, serveMetrics } from './http/metrics.ts';
import type { Config } from './config.ts';
import { compose, type Composition } from './composition.ts';
import { startWorker } from './jobs/worker.ts';
import { systemClock } from './lib/clock.ts';
import { missingApiNodeOptions } from './lib/collector.ts';
import { createIdlePriority } from './lib/idle-priority.ts';
import { createLogger } from './logger.ts';
import { requeueUnsentMail } from './modules/mail/jobs.ts';
import { ensureDemoData } from './registry/demo.ts';
import { openRuntime } from './runtime.ts';

/** How long a graceful shutdown may take before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 30_000;

/**
 * `regwatch serve`: the API, the workers and the scheduler, as ROLE says, over one set of parts
 * (src/composition.ts). Shutdown on SIGINT or SIGTERM (or a crash) is graceful, through
 * close-with-grace: the HTTP server stops accepting and finishes in-flight requests, the worker
 * finishes running jobs, then the parts and the database (and an embedded cluster) are let go.
 */
export async function serveCommand(given: Config): Promise<number> {
  const config = await resolveListenPort(given);
  const logger = createLogger(config.logLevel);
  const started = Date.now();
  // WORKER_IDLE_PRIORITY (ROLE=worker only): every backend of the worker's pool (graphile-worker's
  // too: it is the same pool) and of the connections made with its settings, and then the process.
  const idle = config.workerIdlePriority ? createIdlePriority({ logger }) : null;
  const runtime = await openRuntime(config, logger, { poolSize: 20, onConnect: idle?.onConnect });
  await idle?.applyToProcess();
  const db = runtime.database.db;
  let parts: Composition | null = null;
  let app: FastifyInstance | null = null;
  let runner: Runner | null = null;
  let redis: Redis | null = null;
  let demo: Promise<void> | null = null;
  // A stop during the demo's first load ends it at its next batch (it resumes at the next start).
  const demoAbort = new AbortController();
  let metricsServer: { close: () => Promise<void> } | null = null;

  // Once, whoever asks first (a failed start, then close-with-grace at the process's exit).
  let stopping: Promise<void> | null = null;
  const shutdown = () => (stopping ??= stopAll());
  const stopAll = async () => {
    await app?.close();
    demoAbort.abort();
    await demo;
    await runner?.stop();
    await metricsServer?.close();
    await parts?.close();
    redis?.disconnect();
    await runtime.close();
    logger.info('stopped');
  };

  let stopped: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const grace = closeWithGrace(
    { delay: SHUTDOWN_GRACE_MS, logger: { error: (m: unknown) => logger.error(m) } },
    async ({ signal, err }) => {
      if (err) logger.error({ err }, 'shutting down after an error');
      else logger.info({ signal }, 'shutting down');
      try {
        await shutdown();
      } finally {
        stopped();
      }
    },
  );

  try {
    parts = compose({ config, db, logger, clock: systemClock });
    // METRICS_PORT: /metrics and /health on a port of their own, whatever the role.
    const registry =
      config.metricsPort === null ? null : createMetricsRegistry({ db, clock: parts.clock, sources: parts.modules.sources.service });
    if (registry) {
      const served = await serveMetrics(registry, { host: config.host, port: config.metricsPort!, health: () => databaseHealth(db) });
      metricsServer = served;
      logger.info({ port: served.port }, 'metrics and health served on METRICS_PORT');
    }
    if (config.role === 'all' || config.role === 'worker') {
      runner = await startWorker({ pool: runtime.database.pool, logger, modules: parts.jobs, recovery: config.jobRecovery });
      if (config.smtpUrl && config.workerJobs.includes('mail')) {
        const n = await requeueUnsentMail(db);
        if (n > 0) logger.info({ count: n }, 'queued unsent mail from the outbox');
      }
      logger.info({ jobs: config.workerJobs }, 'worker started');
      // The recovery mail's link is built where the mail job runs: in a worker without an API,
      // HOST:PORT of this process is where no API answers.
      if (config.role === 'worker' && !config.publicBaseUrlSet && config.workerJobs.includes('accounts'))
        logger.warn(
          { url: config.publicBaseUrl },
          'PUBLIC_BASE_URL is not set: the links this worker mails (account recovery) point at its own HOST:PORT, where no API listens; set it to the API address (docs/deployment.md)',
        );
    }
    if (config.role === 'all' || config.role === 'api') {
      const missing = missingApiNodeOptions(process.execArgv, config.nodeOptions);
      if (missing.length > 0)
        logger.info(
          { node_options: missing },
          'started without the node options of an API process: index rebuilds may pause requests for over 20 ms; start it with node --no-memory-reducer --v8-pool-size=0 (docs/deployment.md)',
        );
      if (config.redisUrl) redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
      app = await buildApp(parts, { redis: redis ?? undefined, ...(registry ? { metrics: { registry, serve: false } } : {}) });
      await app.listen({ port: config.port, host: config.host });
      logger.info(
        { url: config.publicBaseUrl, docs: `${config.publicBaseUrl}/docs`, startup_ms: Date.now() - started },
        'regwatch is ready',
      );
    }
    if (runtime.embedded && config.demoCompanies > 0 && config.role !== 'api' && config.workerJobs.includes('registry')) {
      // The API answers while the demo registry loads (it is resumable, so a stop midway is harmless).
      demo = ensureDemoData(runtime, { signal: demoAbort.signal }).then(
        () => undefined,
        (e) => {
          if (demoAbort.signal.aborted) logger.info('loading demo data stopped with the server; it resumes at the next start');
          else logger.error({ err: e }, 'loading demo data failed');
        },
      );
    }
  } catch (e) {
    // A start that failed (the port taken, say) exits non-zero: close-with-grace, left installed,
    // would end the process with 0 when its event loop empties (its beforeExit handler).
    grace.uninstall();
    await shutdown().catch((e2) => logger.error({ err: e2 }, 'error during shutdown'));
    throw e;
  }
  await done;
  return 0;
}
