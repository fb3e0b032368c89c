/**
 * MCP benchmark: what the MCP endpoint (a fresh SDK server and transport per request, stateless)
 * costs over the REST route that calls the same service. Interleaved in one run, one call each
 * in turn: sequential latency of REST `GET /wallet` vs MCP `get_wallet` (the transport's own
 * cost: the service is one primary-key read) and REST `POST /companies/snapshot` vs MCP
 * `get_company` (a real priced operation, charged alike), then both of the latter at 50
 * connections (autocannon). Every MCP call is one raw JSON-RPC POST, without `initialize`.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench_mcp node --import tsx bench/mcp.ts [--requests 1000] [--seconds 10]
 *
 * The database needs companies, e.g. `regwatch migrate && regwatch seed --synthetic 20000 --seed 1` on it.
 */
import { cpus, loadavg } from 'node:os';
import { sql } from 'kysely';
import { argValue, runLoad, startBenchApp, summary } from './search-fixtures.ts';

const requests = Number(argValue('requests', '1000'));
const seconds = Number(argValue('seconds', '10'));
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

console.log(JSON.stringify({ started: new Date().toISOString(), cpus: cpus().length, loadavg_1m_5m_15m: load() }));
const bench = await startBenchApp();
try {
  const { rows } = await sql<{ value: string }>`
    SELECT identifier_value(key) AS value FROM company_identifiers WHERE identifier_type(key) = 'NIP' LIMIT 2000`.execute(bench.handle.db);
  if (rows.length === 0) throw new Error('No companies: seed the benchmark database first (see the header).');
  const nips = rows.map((r) => r.value);
  const auth = { authorization: `Bearer ${bench.token}` };
  const jsonHeaders = { ...auth, 'content-type': 'application/json' };
  const mcpHeaders = { ...jsonHeaders, accept: 'application/json, text/event-stream' };
  const rpc = (name: string, args: object, id = 1) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

  const timed = async (url: string, init: RequestInit, check: (status: number, body: string) => boolean) => {
    const t0 = performance.now();
    const res = await fetch(`${bench.baseUrl}${url}`, init);
    const body = await res.text();
    if (!check(res.status, body)) throw new Error(`${url}: HTTP ${res.status} ${body.slice(0, 200)}`);
    return performance.now() - t0;
  };
  const ok = (status: number) => status === 200;
  const toolOk = (status: number, body: string) => status === 200 && !body.includes('"isError":true');
  const calls = {
    rest_wallet: () => timed('/api/v1/wallet', { headers: auth }, ok),
    mcp_get_wallet: () => timed('/api/v1/mcp', { method: 'POST', headers: mcpHeaders, body: rpc('get_wallet', {}) }, toolOk),
    rest_snapshot: (i: number) =>
      timed(
        '/api/v1/companies/snapshot',
        { method: 'POST', headers: jsonHeaders, body: JSON.stringify({ identifier_type: 'NIP', identifier_value: nips[i % nips.length] }) },
        ok,
      ),
    mcp_get_company: (i: number) =>
      timed(
        '/api/v1/mcp',
        {
          method: 'POST',
          headers: mcpHeaders,
          body: rpc('get_company', { identifier_type: 'NIP', identifier_value: nips[i % nips.length] }),
        },
        toolOk,
      ),
  };
  const latencies: Record<keyof typeof calls, number[]> = { rest_wallet: [], mcp_get_wallet: [], rest_snapshot: [], mcp_get_company: [] };
  for (let i = 0; i < 50; i++) for (const f of Object.values(calls)) await f(i);
  for (let i = 0; i < requests; i++) {
    for (const [name, f] of Object.entries(calls) as [keyof typeof calls, (i: number) => Promise<number>][])
      latencies[name].push(await f(i));
  }
  console.log(JSON.stringify({ sequential_ms: Object.fromEntries(Object.entries(latencies).map(([k, v]) => [k, summary(v)])) }));

  const restBodies = nips.map((v) => JSON.stringify({ identifier_type: 'NIP', identifier_value: v }));
  const mcpBodies = nips.map((v, i) => rpc('get_company', { identifier_type: 'NIP', identifier_value: v }, i));
  const rest = await runLoad({
    url: bench.baseUrl,
    connections: 50,
    durationSeconds: seconds,
    method: 'POST',
    path: '/api/v1/companies/snapshot',
    headers: jsonHeaders,
    bodies: restBodies,
  });
  const mcp = await runLoad({
    url: bench.baseUrl,
    connections: 50,
    durationSeconds: seconds,
    method: 'POST',
    path: '/api/v1/mcp',
    headers: mcpHeaders,
    bodies: mcpBodies,
  });
  console.log(
    JSON.stringify({
      rest_snapshot_50c: rest,
      mcp_get_company_50c: mcp,
      mcp_over_rest: Number((mcp.requestsPerSecond / rest.requestsPerSecond).toFixed(2)),
    }),
  );
  console.log(JSON.stringify({ cpus: cpus().length, loadavg_1m_5m_15m: load() }));
} finally {
  await bench.close();
}
