import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runDay } from '../watchlist-support.ts';
import { bearer, createAccount, createTestApp } from './app.ts';
import { defer } from './cleanup.ts';
import { createTestDatabase } from './db.ts';

/** The official SDK client connected to a listening app's MCP endpoint with `token`, closed when the file's tests end. */
export async function connectMcpClient(baseUrl: string, token: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/api/v1/mcp', baseUrl), { requestInit: { headers: bearer(token) } }));
  defer(() => client.close());
  return client;
}

/**
 * A test file's MCP setup: a fresh database where a daily run found the companies numbered `ns`
 * (in Kraków), the app listening, an account and the SDK client connected with its Master Token.
 */
export async function mcpFixture(name: string, ns: readonly number[]) {
  const db = await createTestDatabase();
  await runDay(
    db.db,
    '2026-11-20',
    ns.map((n) => ({ n, city: 'Kraków' })),
  );
  const t = await createTestApp({ db, listen: true, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  const alice = await createAccount(t);
  return { t, alice, client: await connectMcpClient(t.baseUrl, alice.master, name) };
}
