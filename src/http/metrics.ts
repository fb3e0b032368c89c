import type { FastifyInstance } from 'fastify';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import client from 'prom-client';
import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import { installSourceMetrics } from '../modules/sources/metrics.ts';
import type { SourcesService } from '../modules/sources/service.ts';
import { installWebhookMetrics } from '../modules/webhooks/metrics.ts';
import { routeNotFoundMessage } from './error-handler.ts';

/**
 * Prometheus metrics: requests by route and status, latency histograms, the job queue's depth
 * (read from graphile-worker's tables at scrape time), the registry's daily runs (read from
 * `daily_runs` at scrape time, so every process reports the same), each source's freshness as
 * GET /api/v1/sources reports it, and the webhook attempts this process made. The registry is
 * made once a process (createMetricsRegistry); an API process adds its HTTP metrics
 * (installMetrics) and serves it at GET /metrics on its port, or, with METRICS_PORT, every
 * process serves it on that port (serveMetrics).
 */
export function createMetricsRegistry(deps: { db: Db; clock: Clock; sources: SourcesService }): client.Registry {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'regwatch_' });
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

  installRegistryRunMetrics(registry, deps.db);
  installWebhookMetrics(registry, { db: deps.db, clock: deps.clock });
  installSourceMetrics(registry, deps.sources);
  return registry;
}

/** The HTTP metrics of an API process, in `registry`; GET /metrics on the API's port unless `serve` is false. */
export function installMetrics(app: FastifyInstance, deps: { registry: client.Registry; serve: boolean }): void {
  const { registry } = deps;
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

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  if (!deps.serve) return;
  app.get('/metrics', { config: { auth: 'none', rateLimitGroup: 'none' }, schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}

/**
 * METRICS_PORT: GET /metrics and GET /health on a port of their own, in any role (a worker has no
 * other port), so that an operator scrapes every process and keeps /metrics off the public port.
 * Plain node:http: two fixed paths, nothing else to route.
 */
export async function serveMetrics(
  registry: client.Registry,
  o: { host: string; port: number; health: () => Promise<{ code: number; body: object }> },
): Promise<{ close: () => Promise<void>; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (code: number, type: string, body: string) => {
      res.writeHead(code, { 'content-type': type, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(405, 'application/json', JSON.stringify({ message: 'Only GET is supported.' }));
    if (path === '/metrics')
      return void registry.metrics().then(
        (text) => send(200, registry.contentType, text),
        () => send(500, 'application/json', JSON.stringify({ message: 'Server Error' })),
      );
    if (path === '/health') return void o.health().then((h) => send(h.code, 'application/json', JSON.stringify(h.body)));
    send(404, 'application/json', JSON.stringify({ message: routeNotFoundMessage(path) }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface LastRunRow {
  source: string;
  run_date_seconds: number;
  duration_seconds: number | null;
  new_count: number;
  updated_count: number;
  deleted_count: number;
  events_count: number;
  skipped_count: number;
}

/**
 * The daily runs an operator alerts on (on-demand imports, runs of kind 'import', are not daily runs):
 * the date of each source's latest completed run (alert when `time()` runs ahead of it by more than
 * a day or two), that run's duration and counts, and the runs that are still running or failed.
 */
function installRegistryRunMetrics(registry: client.Registry, db: Db): void {
  let last: Promise<LastRunRow[]> | null = null;
  // The gauges below are collected one after another in a scrape; they share one query.
  const lastRuns = () => {
    last ??= sql<LastRunRow>`
      SELECT DISTINCT ON (source) source,
        extract(epoch FROM run_date::timestamp)::float8 AS run_date_seconds,
        extract(epoch FROM finished_at - started_at)::float8 AS duration_seconds,
        new_count, updated_count, deleted_count, events_count::float8 AS events_count, skipped_count
      FROM daily_runs
      WHERE status = 'completed' AND kind = 'daily'
      ORDER BY source, run_date DESC, id DESC`
      .execute(db)
      .then(
        (r) => r.rows,
        () => [],
      )
      .finally(() => {
        setImmediate(() => {
          last = null;
        });
      });
    return last;
  };
  new client.Gauge({
    name: 'regwatch_registry_last_completed_run_date_seconds',
    help: 'The date (midnight UTC, as a Unix time) of the latest completed daily run, by source',
    labelNames: ['source'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await lastRuns()) this.set({ source: r.source }, r.run_date_seconds);
    },
  });
  new client.Gauge({
    name: 'regwatch_registry_last_completed_run_duration_seconds',
    help: "How long the latest completed daily run took, from its first attempt's start to its end, by source",
    labelNames: ['source'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await lastRuns()) if (r.duration_seconds !== null) this.set({ source: r.source }, r.duration_seconds);
    },
  });
  new client.Gauge({
    name: 'regwatch_registry_last_completed_run_count',
    help: 'What the latest completed daily run counted, by source and kind (new, updated, deleted companies; events; skipped snapshots)',
    labelNames: ['source', 'kind'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await lastRuns()) {
        this.set({ source: r.source, kind: 'new' }, r.new_count);
        this.set({ source: r.source, kind: 'updated' }, r.updated_count);
        this.set({ source: r.source, kind: 'deleted' }, r.deleted_count);
        this.set({ source: r.source, kind: 'events' }, r.events_count);
        this.set({ source: r.source, kind: 'skipped' }, r.skipped_count);
      }
    },
  });
  new client.Gauge({
    name: 'regwatch_registry_unfinished_runs',
    help: 'Daily runs not completed, by source and status (running, or failed and waiting for a retry)',
    labelNames: ['source', 'status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        const { rows } = await sql<{ source: string; status: string; n: number }>`
          SELECT source, status, count(*)::int AS n FROM daily_runs
          WHERE status <> 'completed' AND kind = 'daily'
          GROUP BY source, status`.execute(db);
        for (const r of rows) this.set({ source: r.source, status: r.status }, r.n);
      } catch {
        // A scrape must not fail because the database is briefly unavailable.
      }
    },
  });
}
