/**
 * Snapshot benchmark: POST /api/v1/companies/snapshot over HTTP against the benchmark database —
 * sequential latency, then requests a second at 50 connections (autocannon) beside a bare
 * Fastify route measured in the same run (one inside the app, behind every global hook, and one
 * on a plain Fastify instance), with the server's memory under load.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench node --import tsx bench/snapshot-api.ts [--requests 3000] [--seconds 20]
 */
import Fastify from 'fastify';
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { argValue, mb, runLoad, sampleMemory, startBenchApp, summary } from './search-fixtures.ts';

const requests = Number(argValue('requests', '3000'));
const seconds = Number(argValue('seconds', '20'));

/** The formatting variants clients send: NIP with dashes or a PL prefix, KRS without zeros. */
function variant(type: string, value: string, i: number): string {
  if (type === 'NIP' && i % 3 === 1) return `${value.slice(0, 3)}-${value.slice(3, 6)}-${value.slice(6, 8)}-${value.slice(8)}`;
  if (type === 'NIP' && i % 3 === 2) return `PL${value}`;
  if (type === 'KRS' && i % 2 === 1) return value.replace(/^0+/, '');
  return value;
}

console.log(
  JSON.stringify({ started: new Date().toISOString(), cpus: cpus().length, loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }),
);
const bench = await startBenchApp();
const bare = Fastify({ logger: false });
bare.get('/bare', async () => ({ status: 'success', data: { ok: true } }));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
try {
  const { rows } = await sql<{ type: string; value: string }>`
    SELECT identifier_type(key) AS type, identifier_value(key) AS value FROM company_identifiers TABLESAMPLE SYSTEM (1) LIMIT 5000`.execute(
    bench.handle.db,
  );
  const bodies = rows.map((r, i) => JSON.stringify({ identifier_type: r.type, identifier_value: variant(r.type, r.value, i) }));
  const headers = { authorization: `Bearer ${bench.token}`, 'content-type': 'application/json' };

  const post = async (body: string) => {
    const t0 = performance.now();
    const res = await fetch(`${bench.baseUrl}/api/v1/companies/snapshot`, { method: 'POST', headers, body });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${body}: HTTP ${res.status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 100; i++) await post(bodies[i % bodies.length]!);
  const latencies: number[] = [];
  for (let i = 0; i < requests; i++) latencies.push(await post(bodies[i % bodies.length]!));
  console.log(
    JSON.stringify({ identifiers: bodies.length, snapshot_sequential_ms: summary(latencies), rss_mb: mb(process.memoryUsage().rss) }),
  );

  const snapshot = await sampleMemory(() =>
    runLoad({
      url: bench.baseUrl,
      connections: 50,
      durationSeconds: seconds,
      method: 'POST',
      path: '/api/v1/companies/snapshot',
      headers,
      bodies,
    }),
  );
  console.log(
    JSON.stringify({ snapshot_50c: snapshot.result, server_max_rss_mb: snapshot.maxRssMb, server_max_heap_mb: snapshot.maxHeapMb }),
  );
  const inApp = await runLoad({
    url: bench.baseUrl,
    connections: 50,
    durationSeconds: seconds,
    method: 'GET',
    path: '/bench/bare',
    headers: {},
  });
  console.log(JSON.stringify({ bare_route_in_app_50c: inApp }));
  const plain = await runLoad({ url: bareUrl, connections: 50, durationSeconds: seconds, method: 'GET', path: '/bare', headers: {} });
  console.log(JSON.stringify({ bare_fastify_50c: plain }));
  console.log(
    JSON.stringify({
      snapshot_over_bare_in_app: Number((snapshot.result.requestsPerSecond / inApp.requestsPerSecond).toFixed(2)),
      snapshot_over_plain_fastify: Number((snapshot.result.requestsPerSecond / plain.requestsPerSecond).toFixed(2)),
    }),
  );
  console.log(JSON.stringify({ cpus: cpus().length, loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }));
} finally {
  await bare.close();
  await bench.close();
}
