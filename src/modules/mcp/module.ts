import type { Db } from '../../db/database.ts';
import type { Log } from '../../logger.ts';
import type { AppModule } from '../module.ts';
import type { PriceTable } from '../wallet/credits.ts';
import { mcpRoutes } from './routes.ts';
import { createMcpServer, toolDefinitions } from './server.ts';
import { createTools, type McpServices } from './tools.ts';

/**
 * The MCP server (docs/mcp.md): the nine tools over the other modules' services, served as
 * Streamable HTTP at /api/v1/mcp with the REST API's token, limits and prices. `regwatch mcp`
 * (src/modules/mcp/bridge.ts) relays stdio to it.
 */
export function createMcpModule(deps: McpServices & { db: Db; prices: PriceTable; logger: Log }) {
  const tools = createTools(deps);
  const definitions = toolDefinitions(tools, deps.prices);
  const serverDeps = { db: deps.db, prices: deps.prices, tools, logger: deps.logger };
  return {
    name: 'mcp',
    tools,
    routes: async (api) => {
      await api.register(
        mcpRoutes({ createServer: (principal, log) => createMcpServer(serverDeps, definitions, { accountId: principal.accountId }, log) }),
      );
    },
  } satisfies AppModule & { tools: unknown };
}
