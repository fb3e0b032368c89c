import type { FastifyInstance } from 'fastify';
import { statsRoutes } from './stats/routes.ts';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import type { UsageTracker } from './tokens/usage.ts';
import { walletPlugin } from './wallet/plugin.ts';
import { watchlistPlugin } from './watchlist/plugin.ts';

/** What the feature modules' routes receive from the composition root. */
export interface ExtraRouteDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  usage: UsageTracker;
}

/**
 * Registers the feature modules' routes (stats, wallet, companies, watchlist) under /api/v1.
 * Each module is one line here, so a module can be read, and deleted, as a unit.
 */
export async function extraRoutes(api: FastifyInstance, deps: ExtraRouteDeps): Promise<void> {
  await api.register(walletPlugin(deps));
  await api.register(statsRoutes({ db: deps.db }));
  await api.register(watchlistPlugin(deps));
}
