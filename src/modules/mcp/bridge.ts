import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import { toolError } from './errors.ts';
import { INSTRUCTIONS, SERVER_INFO } from './info.ts';
import { refusingInvalidParams } from './invalid-params.ts';
import { rpcError } from './rpc-error.ts';

/**
 * `regwatch mcp`: an MCP server on stdio for clients that only speak stdio, relaying `tools/list`
 * and `tools/call` to the Streamable HTTP endpoint of a regwatch server with the official SDK's
 * Client (docs/mcp.md). A proxy rather than a byte relay, so that a failure of the HTTP side (a
 * bad token, the server down, a 429) reaches the agent as a tool error with the REST message
 * instead of a dropped connection. The remote connection is opened on the first request and
 * opened again after a failure.
 */

export interface BridgeOptions {
  /** The service's base URL (`http://host:3000`) or the endpoint itself (`…/api/v1/mcp`). */
  url: string;
  token: string;
  stdin?: Readable;
  stdout?: Writable;
  /** Diagnostics (stderr): stdout carries the protocol only. */
  warn?: (line: string) => void;
}

const API_PATH = '/api/v1';
const ENDPOINT_PATH = `${API_PATH}/mcp`;

export function endpointOf(url: string): URL {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`Not an http(s) URL: ${url}`);
  // The endpoint has no route with a trailing slash: `…/api/v1/mcp/` is `…/api/v1/mcp`. The
  // REST API's base (`…/api/v1`, what a client of the API has configured) names the endpoint too.
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path.endsWith(ENDPOINT_PATH) ? path : path.endsWith(API_PATH) ? `${path}/mcp` : `${path}${ENDPOINT_PATH}`;
  return u;
}

/** The REST error behind a failed HTTP exchange: its status and message (`{error}` for 401, `{message}` otherwise). */
export function remoteError(e: unknown, endpoint: URL): { status: number; message: string; code?: string } {
  if (e instanceof StreamableHTTPError) {
    const text = e.message.slice(e.message.indexOf('{'));
    try {
      const body = JSON.parse(text) as { error?: unknown; message?: unknown; code?: unknown };
      const message = typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : null;
      // The REST body's machine-readable code (UNAUTHORIZED, …) travels with it, as the HTTP endpoint's tool errors carry it.
      if (message) return { status: e.code ?? 502, message, ...(typeof body.code === 'string' ? { code: body.code } : {}) };
    } catch {
      // Not a regwatch body (a proxy's page): fall through.
    }
    return { status: e.code ?? 502, message: `The regwatch server at ${endpoint.origin} answered HTTP ${e.code}.` };
  }
  return {
    status: 502,
    message: `The regwatch server at ${endpoint.origin} could not be reached: ${e instanceof Error ? e.message : String(e)}`,
  };
}

/** Serves until stdin ends; resolves with the exit code. */
export async function runStdioBridge(options: BridgeOptions): Promise<number> {
  const endpoint = endpointOf(options.url);
  const warn = options.warn ?? (() => {});
  let remote: Promise<Client> | null = null;
  const connectRemote = (): Promise<Client> => {
    remote ??= (async () => {
      const client = new Client({ name: 'regwatch-stdio-bridge', version: SERVER_INFO.version });
      await client.connect(
        new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${options.token}` } } }),
      );
      return client;
    })().catch((e: unknown) => {
      remote = null;
      throw e;
    });
    return remote;
  };

  // The low-level Server: it relays the remote tool list (JSON Schema) as it is.
  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    try {
      return await (await connectRemote()).listTools(request.params);
    } catch (e) {
      if (e instanceof McpError) throw rpcError(e.code, e.message, e.data);
      const r = remoteError(e, endpoint);
      warn(`regwatch mcp: tools/list failed: ${r.message}`);
      throw rpcError(ErrorCode.InternalError, r.message);
    }
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    try {
      return await (await connectRemote()).callTool(request.params);
    } catch (e) {
      // A JSON-RPC error of the server (an unknown tool) stays one; an HTTP failure is a tool error.
      if (e instanceof McpError) throw rpcError(e.code, e.message, e.data);
      const r = remoteError(e, endpoint);
      warn(`regwatch mcp: ${request.params.name} failed: ${r.message}`);
      return toolError(r);
    }
  });

  const stdin = options.stdin ?? process.stdin;
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    stdin.once('end', () => void server.close());
  });
  // Malformed params are -32602 with a readable message, as the HTTP endpoint answers them, not the SDK's -32603 with a zod dump.
  await server.connect(refusingInvalidParams(new StdioServerTransport(stdin, options.stdout ?? process.stdout)));
  await closed;
  if (remote) await (await (remote as Promise<Client>).catch(() => null))?.close();
  return 0;
}
