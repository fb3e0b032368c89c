import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { JobModule } from '../../jobs/queue.ts';
import type { AppModule } from '../module.ts';
import { ATTEMPT_TIMEOUT_MS, createSender, type Sender } from './delivery.ts';
import { createWebhookJobs } from './jobs.ts';
import { webhookRoutes } from './routes.ts';
import { createWebhooksService, type WebhooksService } from './service.ts';
import { resolveWithDns, type ResolveHost } from './url-guard.ts';

export { DELIVER_TASK } from './dispatcher.ts';
export { FANOUT_TASK } from './jobs.ts';

export interface WebhooksModuleDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, 'webhookRetrySchedule' | 'webhookAllowPrivateUrls'>;
  logger: Logger;
  /** Name resolution for the URL guard (tests pass one that answers without a network). */
  resolve?: ResolveHost;
  /** Per-attempt timeout; 15 s by the contract (tests shorten it). */
  attemptTimeoutMs?: number;
  /** Attempts in flight per worker run and per endpoint. */
  concurrency?: number;
  perEndpoint?: number;
}

/**
 * Webhooks: signed push delivery of every feed event (docs/webhooks.md). The routes manage
 * endpoints; the jobs fan committed events out into messages and deliver them.
 */
export function createWebhooksModule(
  deps: WebhooksModuleDeps,
): AppModule & { service: WebhooksService; jobs: JobModule; close(): Promise<void> } {
  const resolve = deps.resolve ?? resolveWithDns;
  const allowPrivate = deps.config.webhookAllowPrivateUrls;
  const service = createWebhooksService({ db: deps.db, clock: deps.clock, allowPrivateUrls: allowPrivate, resolve });
  const timeoutMs = deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
  // The connection pool exists only in a process that runs the jobs.
  let sender: Sender | null = null;
  const lazySender: Sender = {
    send: (...args) => (sender ??= createSender({ allowPrivate, resolve, timeoutMs })).send(...args),
    close: async () => {
      await sender?.close();
    },
  };
  const jobs = createWebhookJobs({
    db: deps.db,
    clock: deps.clock,
    logger: deps.logger.child({ component: 'webhooks' }),
    sender: lazySender,
    retrySchedule: deps.config.webhookRetrySchedule,
    concurrency: deps.concurrency ?? 64,
    perEndpoint: deps.perEndpoint ?? 4,
    // Longer than any attempt: a message is taken again only from a worker that died.
    leaseMs: timeoutMs + 15_000,
  });
  return {
    name: 'webhooks',
    service,
    routes: async (api) => {
      await api.register(webhookRoutes({ webhooks: service }));
    },
    jobs,
    close: () => lazySender.close(),
  };
}
