import client from 'prom-client';
import type { SourceStatus } from './schema.ts';
import type { SourcesService } from './service.ts';

/**
 * What GET /api/v1/sources says, as gauges an operator alerts on (docs/sources.md): per source
 * the latest completed day, the gaps of the last 30 days, and the health (1 on the current one).
 */
export function installSourceMetrics(registry: client.Registry, service: SourcesService): void {
  let pending: Promise<SourceStatus[]> | null = null;
  // The gauges are collected one after another in a scrape; they share one reading.
  const read = () => {
    pending ??= service
      .list()
      .catch(() => [] as SourceStatus[])
      .finally(() => {
        setImmediate(() => {
          pending = null;
        });
      });
    return pending;
  };
  new client.Gauge({
    name: 'regwatch_source_last_completed_date_seconds',
    help: 'The latest day with a completed daily run (midnight UTC, as a Unix time), by source',
    labelNames: ['source'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await read())
        if (s.last_completed_date) this.set({ source: s.source }, Date.parse(`${s.last_completed_date}T00:00:00Z`) / 1000);
    },
  });
  new client.Gauge({
    name: 'regwatch_source_gaps',
    help: 'Due days of the last 30 without a completed daily run, by configured source',
    labelNames: ['source'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await read()) if (s.configured) this.set({ source: s.source }, s.gaps.length);
    },
  });
  new client.Gauge({
    name: 'regwatch_source_health',
    help: "A source's health as on GET /api/v1/sources: 1 for the current one (ok, degraded, down, unconfigured), 0 for the others",
    labelNames: ['source', 'health'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const s of await read())
        for (const health of ['ok', 'degraded', 'down', 'unconfigured'])
          this.set({ source: s.source, health }, s.health === health ? 1 : 0);
    },
  });
}
