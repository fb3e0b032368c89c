import type { FastifyInstance } from 'fastify';
import { statsRoutes } from './stats/routes.ts';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import type { UsageTracker } from './tokens/usage.ts';
import { walletPlugin } from './wallet/plugin.ts';
import type { RegistrySource } from '../registry/sources/source.ts';
import type { CompanySearchEngine } from './companies/search-engine.ts';
import { companiesPlugin } from './companies/plugin.ts';
import { dictionaryRoutes } from './dictionaries/routes.ts';
import { watchlistPlugin } from './watchlist/plugin.ts';
import { createWebhooksModule } from './webhooks/module.ts';
import type { ResolveHost } from './webhooks/url-guard.ts';

/** What the feature modules' routes receive from the composition root. */
export interface ExtraRouteDeps {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
  usage: UsageTracker;
  /** Live registry sources for on-demand imports (tests pass fixture-backed ones); default: config.registrySources. */
  registrySources?: RegistrySource[];
  /** The company search engine (tests and benchmarks pass one they control); default: built by the companies module. */
  companySearch?: CompanySearchEngine;
  /** Name resolution of the webhook URL guard (tests answer without a network); default: DNS. */
  webhookResolve?: ResolveHost;
}

/**
 * Registers the feature modules' routes (stats, wallet, companies, watchlist) under /api/v1.
 * Each module is one line here, so a module can be read, and deleted, as a unit.
 */
export async function extraRoutes(api: FastifyInstance, deps: ExtraRouteDeps): Promise<void> {
  await api.register(walletPlugin(deps));
  await api.register(statsRoutes({ db: deps.db }));
  await api.register(companiesPlugin(deps));
  await api.register(dictionaryRoutes());
  await api.register(watchlistPlugin(deps));
  await api.register(createWebhooksModule({ ...deps, resolve: deps.webhookResolve }).routes);
}
