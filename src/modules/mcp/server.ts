import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool as ToolDefinition,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import { DomainError, InsufficientCreditsError, UnauthorizedError, ValidationError } from '../../lib/errors.ts';
import type { Log } from '../../logger.ts';
import { rpcError } from './rpc-error.ts';
import { priceOf, readBalance, tryChargeCredits, type PriceTable } from '../wallet/credits.ts';
import { toolError, toolErrorBody } from './errors.ts';
import { INSTRUCTIONS, SERVER_INFO } from './info.ts';
import { validateArguments } from './schema.ts';
import { plural } from './summaries.ts';
import type { Tool, ToolContext } from './tools.ts';

/**
 * The MCP protocol side of the tools: `tools/list` and `tools/call` on the SDK's low-level
 * `Server` (it takes the tools' JSON Schema as is). A call is sold the way src/http/pricing.ts
 * sells a REST request: a cheap balance check first (402 before any work), the operation, then
 * one conditional ledger entry for `price × units` once it succeeded; a charge lost to a
 * concurrent request answers 402 instead of the data. Tools whose service charges in its own
 * transaction (watch_companies) are left to it. Every failure is a tool error carrying the REST
 * error's message; nothing internal leaves the process.
 */

export interface McpServerDeps {
  db: Db;
  prices: PriceTable;
  tools: readonly Tool[];
  logger: Log;
}

function priceSentence(tool: Tool, prices: PriceTable): string {
  if (!tool.price) return 'Price: free.';
  const credits = priceOf(prices, tool.price.operation);
  if (credits === 0) return `Price: free (\`${tool.price.operation}\` is priced at 0 on this service).`;
  return `Price: ${plural(credits, 'credit')} ${tool.price.unit} (\`${tool.price.operation}\`), taken only when the call succeeds; too few credits: an "Insufficient credits" error and nothing is done.`;
}

/** The tools as `tools/list` shows them: the price in each description, the input's JSON Schema, hints. */
export function toolDefinitions(tools: readonly Tool[], prices: PriceTable): ToolDefinition[] {
  return tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: `${tool.description}\n\n${priceSentence(tool, prices)} Pass \`dry_run: true\` to get the price of this call and the balance without doing it.`,
    // TypeBox schemas are JSON Schema; the round trip drops TypeBox's symbol keys.
    inputSchema: JSON.parse(JSON.stringify(tool.input)) as ToolDefinition['inputSchema'],
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.destructive === true,
      idempotentHint: tool.readOnly,
      openWorldHint: tool.openWorld === true,
    },
  }));
}

function answer(structured: Record<string, unknown>, summary: string): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
  };
}

/** One tool call: validate, then dry_run or (check, run, charge). Throws domain errors for the caller to turn into tool errors. */
async function callTool(deps: McpServerDeps, tool: Tool, rawArgs: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const { db, prices } = deps;
  let args: Record<string, unknown> & { dry_run?: boolean };
  tool.preValidation?.(rawArgs);
  try {
    args = validateArguments(tool.validatedInput ?? tool.input, rawArgs, tool.checks) as typeof args;
  } catch (e) {
    if (e instanceof ValidationError && tool.withValueErrors && rawArgs !== null && typeof rawArgs === 'object')
      throw new ValidationError(tool.withValueErrors(rawArgs as Record<string, unknown>, e.errors));
    throw e;
  }
  const price = tool.price;

  if (args.dry_run === true) {
    const quote = await tool.quote(args, ctx);
    const credits = price ? priceOf(prices, price.operation, quote.units) : 0;
    const balance = await readBalance(db, ctx.accountId);
    const structured = {
      dry_run: true,
      tool: tool.name,
      operation: price?.operation ?? null,
      units: quote.units,
      credits,
      balance,
      sufficient: balance >= credits,
      ...(quote.detail ? { detail: quote.detail } : {}),
    };
    const verdict = credits === 0 ? 'It would cost nothing' : `It would cost ${plural(credits, 'credit')}`;
    return answer(
      structured,
      `Dry run of ${tool.name}: nothing was done or charged. ${verdict}; balance ${plural(balance, 'credit')}${balance >= credits ? '' : ' (not enough)'}.`,
    );
  }

  const chargedHere = price?.chargedBy === 'call';
  const units = tool.unitsOf?.(args) ?? 1;
  if (chargedHere) {
    // As the pricing hook's preHandler: bad arguments are the REST route's 422 whatever the
    // balance (the quote checks them as the call would), and no work is done for a wallet that
    // cannot pay for the call.
    await tool.quote(args, ctx);
    const required = priceOf(prices, price.operation, units);
    const balance = required > 0 ? await readBalance(db, ctx.accountId) : 0;
    if (balance < required) throw new InsufficientCreditsError(balance, required);
  }
  const result = await tool.run(args, ctx);
  let charge = '';
  if (chargedHere) {
    const r = await tryChargeCredits(db, { accountId: ctx.accountId, operation: price.operation, units, prices });
    // No ifTokenActive here (the MCP request looked its token up), so only a short balance refuses.
    if (!r.taken && r.reason === 'inactive-token') throw new UnauthorizedError('Token revoked');
    if (!r.taken) {
      deps.logger.info(
        { tool: tool.name, balance: r.balance, required: r.required },
        'mcp: charge lost to a concurrent request: answering 402',
      );
      throw new InsufficientCreditsError(r.balance, r.required);
    }
    if (r.charged > 0) {
      charge = `\nCharged ${plural(r.charged, 'credit')}; balance ${plural(r.balanceAfter ?? 0, 'credit')}.`;
      result.structured = { ...result.structured, credits: { charged: r.charged, balance: r.balanceAfter } };
    }
  } else if (
    price?.chargedBy === 'service' &&
    typeof result.structured.credits_charged === 'number' &&
    result.structured.credits_charged > 0
  ) {
    // Charged inside the service's own transaction: the balance is read once it committed.
    const charged = result.structured.credits_charged;
    const balance = await readBalance(db, ctx.accountId);
    charge = `\nCharged ${plural(charged, 'credit')}; balance ${plural(balance, 'credit')}.`;
    result.structured = { ...result.structured, credits: { charged, balance } };
  }
  return answer(result.structured, result.summary + charge);
}

/**
 * A server for one principal. Stateless: the HTTP route builds one per request (cheap: two
 * handlers over tool definitions built once), so any API process can answer any request.
 */
/**
 * The SDK's validator of elicitation answers (never used here): one for every server, since each
 * would otherwise build its own ajv instance, the largest part of a server's construction.
 */
const elicitationValidator = new AjvJsonSchemaValidator();

const LooseCallToolRequest = z.object({ method: z.literal('tools/call'), params: z.unknown() }).loose();

export function createMcpServer(deps: McpServerDeps, definitions: readonly ToolDefinition[], ctx: ToolContext, log: Log): Server {
  // The low-level Server on purpose: it takes the tools' JSON Schema (TypeBox) as is.
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: elicitationValidator,
  });
  const byName = new Map(deps.tools.map((t) => [t.name, t]));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...definitions] }));
  // Registered with a loose schema: with CallToolRequestSchema itself, the SDK's first parse
  // answered a malformed call (`arguments: null`) as an internal error (-32603). The endpoint
  // refuses such a call first (invalid-params.ts: -32602, readable); the SDK's tools/call wrapper
  // checks it again, so what reaches this handler parses.
  server.setRequestHandler(LooseCallToolRequest, async (raw) => {
    const request = CallToolRequestSchema.parse(raw);
    const tool = byName.get(request.params.name);
    if (!tool) throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    try {
      return await callTool(deps, tool, request.params.arguments, ctx);
    } catch (e) {
      const body = toolErrorBody(e);
      if (body) return toolError(body);
      log.error({ err: e, tool: tool.name }, e instanceof DomainError ? 'mcp: unmapped domain error' : 'mcp: tool failed');
      return toolError({ status: 500, message: 'Server Error' });
    }
  });
  server.onerror = (e) => log.warn({ err: e }, 'mcp: protocol error');
  return server;
}
