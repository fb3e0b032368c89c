/**
 * A JSON-RPC error for the MCP SDK's Protocol to answer with: it sends `code`, `message` and
 * `data` of what a handler throws. Not the SDK's McpError, whose message carries an
 * `MCP error <code>: ` prefix that the client's McpError adds again on its side ("MCP error
 * -32602: MCP error -32602: Unknown tool"). A remote error relayed by the stdio bridge loses the
 * prefix its client's McpError gave it.
 */
export function rpcError(code: number, message: string, data?: unknown): Error & { code: number; data?: unknown } {
  return Object.assign(new Error(withoutRpcPrefix(message)), { code, ...(data === undefined ? {} : { data }) });
}

/** The message without McpError's `MCP error <code>: ` prefixes. */
function withoutRpcPrefix(message: string): string {
  return message.replace(/^(MCP error -?\d+: )+/, '');
}
