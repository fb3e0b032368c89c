import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import client from 'prom-client';
import type { Db } from '../db/database.ts';

/**
 * Prometheus metrics at GET /metrics: requests by route and status, latency histograms, and
 * the job queue's depth (read from graphile-worker's tables at scrape time).
 */
export function installMetrics(app: FastifyInstance, deps: { db: Db }): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'regwatch_' });
  const requests = new client.Counter({
    name: 'regwatch_http_requests_total',
    help: 'HTTP requests by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: 'regwatch_http_request_duration_seconds',
    help: 'HTTP request latency by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  new client.Gauge({
    name: 'regwatch_job_queue_depth',
    help: 'Jobs waiting in the queue, by task (not locked by a worker)',
    labelNames: ['task'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const rows = await sql<{ task: string; n: number }>`
          SELECT t.identifier AS task, count(*)::int AS n
            FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
           WHERE j.locked_at IS NULL AND j.attempts < j.max_attempts
           GROUP BY t.identifier`.execute(deps.db);
        for (const r of rows.rows) this.set({ task: r.task }, r.n);
      } catch {
        // The queue's tables are internal to graphile-worker; a scrape must not fail on them.
      }
    },
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  app.get('/metrics', { config: { auth: 'none', rateLimitGroup: 'none' }, schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}
