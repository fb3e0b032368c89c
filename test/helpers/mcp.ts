import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bearer } from './app.ts';
import { defer } from './cleanup.ts';

/** The official SDK client connected to a listening app's MCP endpoint with `token`, closed when the file's tests end. */
export async function connectMcpClient(baseUrl: string, token: string, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/api/v1/mcp', baseUrl), { requestInit: { headers: bearer(token) } }));
  defer(() => client.close());
  return client;
}
