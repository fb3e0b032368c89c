import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../tokens/authenticate.ts';
import type { Log } from '../../logger.ts';
import { invalidParams } from './invalid-params.ts';

/** The headers the Streamable HTTP transport reads; the rest (the Bearer token first) stays out of it. */
const TRANSPORT_HEADERS = ['content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** A JSON-RPC error answer that belongs to no request (`id` null), as the transport answers a malformed body. */
const rpcErrorBody = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null }) as const;

/** A batch of messages: Invalid Request. */
const BATCH_REFUSED = rpcErrorBody(-32600, 'Invalid Request: send one JSON-RPC message a request (batches are not supported).');
/** JSON that is not a JSON-RPC 2.0 message (`{"foo":1}`, `"x"`, `[]`): Invalid Request, not a parse error. */
const NOT_JSON_RPC = rpcErrorBody(-32600, 'Invalid Request: the body is JSON but not a JSON-RPC 2.0 message.');
/** A body that is not JSON: JSON-RPC's Parse error, rather than the REST 400. */
const PARSE_ERROR = rpcErrorBody(-32700, 'Parse error: the request body is not valid JSON.');

/** A JSON-RPC 2.0 message by the MCP SDK's own schema (an `id` of an object, `error: 5` are not). */
function isJsonRpcMessage(m: unknown): boolean {
  return JSONRPCMessageSchema.safeParse(m).success;
}

function transportRequest(req: FastifyRequest): Request {
  // The answer is always one JSON body, so a client that accepts only JSON (or says nothing) is
  // served too, rather than refused with 406 for not also accepting an SSE stream it never gets.
  const headers = new Headers({ accept: 'application/json, text/event-stream' });
  for (const name of TRANSPORT_HEADERS) {
    const v = req.headers[name];
    if (typeof v === 'string') headers.set(name, v);
  }
  // The transport reads nothing of the URL but its path; a fixed origin, because the Host header
  // is the client's to send empty or malformed (`Host: a@b`), which `new URL` or Request refuses.
  return new Request(new URL(req.url, 'http://localhost'), { method: req.method, headers });
}

/**
 * POST /api/v1/mcp: the MCP Streamable HTTP endpoint (docs/mcp.md). The route sits behind the
 * same hooks as every REST route: the Bearer token (`auth: 'any'`: 401 before anything is read),
 * the per-account rate limit, the request id and the error handler for what fails before the
 * transport (401, 413, 429). Stateless: each request gets its own server and transport, answered
 * with one JSON body (no SSE stream and no session), so any API process can serve any request.
 * GET and DELETE (the standalone SSE stream and session end, meaningless without sessions) answer
 * 405, which clients take as "not offered".
 */
export function mcpRoutes(deps: { createServer: (principal: Principal, log: Log) => Server }) {
  return async (app: FastifyInstance) => {
    const restErrors = app.errorHandler;
    app.post(
      '/mcp',
      {
        errorHandler: (error, req, reply) => {
          if ((error as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') void reply.code(400).send(PARSE_ERROR);
          else void restErrors.call(app, error, req, reply);
        },
        // The text guard's rule applies to the tool arguments (mcp/schema.ts), answered as a tool error.
        config: { auth: 'any', guardBodyText: false },
        // JSON-RPC, not REST: described in docs/mcp.md rather than in the OpenAPI document.
        schema: { hide: true },
      },
      async (req, reply) => {
        // A JSON-RPC batch would run up to 100 tool calls for one request of the rate limit. MCP
        // dropped batches in its 2025-06-18 revision, and no client of this endpoint needs them.
        if (Array.isArray(req.body) && req.body.length > 1) return reply.code(400).send(BATCH_REFUSED);
        if (!(Array.isArray(req.body) ? req.body.length === 1 && isJsonRpcMessage(req.body[0]) : isJsonRpcMessage(req.body)))
          return reply.code(400).send(NOT_JSON_RPC);
        const refused = invalidParams(Array.isArray(req.body) ? req.body[0] : req.body);
        if (refused) return reply.code(200).send(refused);
        const server = deps.createServer(req.auth!, req.log);
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        try {
          await server.connect(transport);
          const response = await transport.handleRequest(transportRequest(req), { parsedBody: req.body });
          const body = await response.text();
          reply.code(response.status);
          response.headers.forEach((value, name) => {
            reply.header(name, value);
          });
          return reply.send(body === '' ? undefined : body);
        } finally {
          await server.close();
        }
      },
    );
  };
}
