import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * The SDK parses `initialize`, `tools/list` and `tools/call` strictly and answers a malformed one
 * as an internal error (-32603) with its parser's dump (or, for tools/call, -32602 with the dump).
 * Checked first, by the HTTP endpoint (routes.ts) and the stdio bridge (bridge.ts) alike, such a
 * request is JSON-RPC's Invalid params (-32602) naming each field in a sentence.
 */
const STRICT_REQUESTS = {
  initialize: InitializeRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
} as const;

export function invalidParams(message: unknown): { jsonrpc: '2.0'; id: string | number; error: { code: number; message: string } } | null {
  const m = message as { method?: unknown; id?: unknown };
  if (typeof m.method !== 'string' || !(m.method in STRICT_REQUESTS) || (typeof m.id !== 'string' && typeof m.id !== 'number')) return null;
  const parsed = STRICT_REQUESTS[m.method as keyof typeof STRICT_REQUESTS].safeParse(message);
  if (parsed.success) return null;
  const where = parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message.toLowerCase()}`).join('; ');
  return { jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `Invalid params of ${m.method}: ${where}` } };
}

/** `inner` with a request of malformed params answered by `invalidParams` before the SDK's server sees it. */
export function refusingInvalidParams(inner: Transport): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
  };
  inner.onmessage = (message, extra) => {
    const refused = invalidParams(message);
    if (refused) inner.send(refused).catch((e: unknown) => outer.onerror?.(e instanceof Error ? e : new Error(String(e))));
    else outer.onmessage?.(message, extra);
  };
  inner.onclose = () => outer.onclose?.();
  inner.onerror = (e) => outer.onerror?.(e);
  return outer;
}
