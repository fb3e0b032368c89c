import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/net.ts';
import { serveProcess } from './helpers/serve.ts';
import { waitFor } from './helpers/wait.ts';

/**
 * METRICS_PORT (docs/configuration.md, "Operations"): every role serves /metrics and /health on a
 * port of its own, a worker included (it opens no other port), and the API's port no longer
 * serves /metrics. Real processes of `regwatch serve`.
 */

const t = await createTestDatabase();
const env: Record<string, string | undefined> = {
  ...process.env,
  DATABASE_URL: t.url,
  REGISTRY_SOURCES: '',
  DEMO_COMPANIES: '0',
  LOG_LEVEL: 'warn',
};
delete env.REDIS_URL;

const up = (port: number, path: string) =>
  waitFor(
    `${path} on ${port}`,
    async () => {
      try {
        return (await fetch(`http://127.0.0.1:${port}${path}`)).status === 200;
      } catch {
        return false;
      }
    },
    60_000,
  );

test('a worker serves /metrics and /health on METRICS_PORT; an API process moves /metrics there', async () => {
  const [workerMetrics, apiPort, apiMetrics] = [await freePort(), await freePort(), await freePort()];
  const worker = serveProcess({ ...env, ROLE: 'worker', METRICS_PORT: String(workerMetrics) });
  const api = serveProcess({ ...env, ROLE: 'api', PORT: String(apiPort), METRICS_PORT: String(apiMetrics) });
  await up(workerMetrics, '/health');
  const health = await fetch(`http://127.0.0.1:${workerMetrics}/health`);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const metrics = await (await fetch(`http://127.0.0.1:${workerMetrics}/metrics`)).text();
  assert.match(metrics, /^# HELP regwatch_webhook_attempts_total/m, worker.output());
  assert.match(metrics, /^regwatch_process_resident_memory_bytes \d/m);
  assert.equal((await fetch(`http://127.0.0.1:${workerMetrics}/nope`)).status, 404);
  assert.equal((await fetch(`http://127.0.0.1:${workerMetrics}/metrics`, { method: 'POST' })).status, 405);

  await up(apiPort, '/health');
  await up(apiMetrics, '/metrics');
  assert.equal((await fetch(`http://127.0.0.1:${apiPort}/metrics`)).status, 404, 'not on the public port');
  await fetch(`http://127.0.0.1:${apiPort}/api/v1/sources`);
  assert.match(
    await (await fetch(`http://127.0.0.1:${apiMetrics}/metrics`)).text(),
    /regwatch_http_requests_total\{method="GET",route="\/api\/v1\/sources"/,
  );

  worker.child.kill('SIGTERM');
  api.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.output());
  assert.equal(await api.exited, 0, api.output());
});
