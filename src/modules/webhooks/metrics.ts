import client from 'prom-client';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { countDisabledEndpoints, countDueDeliveries } from './dispatch-repo.ts';

/**
 * Webhook metrics. Attempts are counted where they happen (the worker; in one process with the
 * API when ROLE=all); the queue's depth and the disabled endpoints are read from the database at
 * scrape time, so every API process reports the same.
 */
export const attemptOutcomes = new client.Counter({
  name: 'regwatch_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, failed, timeout, blocked, gone)',
  labelNames: ['outcome'] as const,
  registers: [],
});

export const attemptSeconds = new client.Histogram({
  name: 'regwatch_webhook_attempt_duration_seconds',
  help: 'Time from sending a webhook to its answer (or the timeout)',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
  registers: [],
});

export const endpointsDisabled = new client.Counter({
  name: 'regwatch_webhook_endpoints_disabled_total',
  help: 'Endpoints disabled by the worker (410 Gone, or 5 days of failures)',
  labelNames: ['reason'] as const,
  registers: [],
});

/** Adds the webhook metrics to the service's registry (src/http/metrics.ts). */
export function installWebhookMetrics(registry: client.Registry, deps: { db: Db; clock: Clock }): void {
  registry.registerMetric(attemptOutcomes);
  registry.registerMetric(attemptSeconds);
  registry.registerMetric(endpointsDisabled);
  new client.Gauge({
    name: 'regwatch_webhook_queue_depth',
    help: 'Webhook messages due for an attempt to an enabled endpoint (those held for a disabled one apart)',
    registers: [registry],
    async collect() {
      try {
        this.set(await countDueDeliveries(deps.db, deps.clock.now()));
      } catch {
        // A scrape must not fail on one source.
      }
    },
  });
  new client.Gauge({
    name: 'regwatch_webhook_endpoints_disabled',
    help: 'Webhook endpoints currently disabled',
    registers: [registry],
    async collect() {
      try {
        this.set(await countDisabledEndpoints(deps.db));
      } catch {
        // As above.
      }
    },
  });
}
