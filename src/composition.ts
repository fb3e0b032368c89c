import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { JOB_MODULES, type Config } from './config.ts';
import type { Db } from './db/database.ts';
import type { Clock } from './lib/clock.ts';
import type { JobModule } from './jobs/queue.ts';
import { createAccountsModule } from './modules/accounts/module.ts';
import { createCompaniesModule } from './modules/companies/module.ts';
import { createCompanySearchEngine, type CompanySearchEngine, type SearchEngineOptions } from './modules/companies/search-engine.ts';
import { createDictionariesModule } from './modules/dictionaries/module.ts';
import { createMailTransport } from './modules/mail/jobs.ts';
import { createMailModule } from './modules/mail/module.ts';
import type { MatchEngine } from './modules/match/engine.ts';
import { createMatchModule } from './modules/match/module.ts';
import { createMcpModule } from './modules/mcp/module.ts';
import type { AppModule } from './modules/module.ts';
import { createSourcesModule } from './modules/sources/module.ts';
import { createStatsModule } from './modules/stats/module.ts';
import { createTokensModule } from './modules/tokens/module.ts';
import { createUsageTracker, type UsageTracker } from './modules/tokens/usage.ts';
import { createWalletModule } from './modules/wallet/module.ts';
import { createPaymentProviders, type PaymentProviders } from './modules/wallet/payments/index.ts';
import { createWatchlistModule } from './modules/watchlist/module.ts';
import { createWebhooksModule } from './modules/webhooks/module.ts';
import type { ResolveHost } from './modules/webhooks/url-guard.ts';
import { createCompanyImporter } from './registry/import.ts';
import { createRegistryModule } from './registry/module.ts';
import { createLiveSources } from './registry/sources/index.ts';
import type { RegistrySource } from './registry/sources/source.ts';

/**
 * The one composition root. Every entry point (the server, the CLI, tests, benchmarks) hands it
 * the process's core (config, database, logger, clock) and gets back each part built once: the
 * payment providers, the live registry connectors, the search engine, the mail transport, the
 * token usage tracker, and every domain module. The HTTP app (src/app.ts) registers the modules'
 * routes, the worker (src/jobs/worker.ts) runs their jobs; `close()` lets go of what was built here.
 *
 * Tests and benchmarks swap parts through `overrides`, never through branches deeper inside. A
 * part passed in is left to its owner to close.
 */

export interface Core {
  config: Config;
  db: Db;
  logger: Logger;
  clock: Clock;
}

export interface PartOverrides {
  /** Live registry connectors for on-demand imports (default: those REGISTRY_SOURCES names). */
  registrySources?: RegistrySource[];
  /** The company search engine (default: one over the database, its index built once serving). */
  companySearch?: CompanySearchEngine;
  /** Options of the default search engine (a smaller delta threshold, a faster follow, a build in this thread). */
  companySearchOptions?: Partial<Pick<SearchEngineOptions, 'maxDelta' | 'followEveryMs' | 'buildIn' | 'chunkSize'>>;
  payments?: PaymentProviders;
  /** Mail transport (default: SMTP_URL's, or none: mail stays in the outbox). */
  mailTransport?: Transporter | null;
  /** Name resolution of the webhook URL guard (default: DNS; tests answer without a network). */
  webhookResolve?: ResolveHost;
  /** A webhook attempt's timeout (default: the contract's 15 s; tests shorten it). */
  webhookAttemptTimeoutMs?: number;
  /** The match index's engine (default: one over the database, built once serving). */
  matchEngine?: MatchEngine;
}

export interface Composition extends Core {
  usage: UsageTracker;
  companySearch: CompanySearchEngine;
  modules: ReturnType<typeof createModules>;
  /** The same modules as a list, in registration order: what the app and the worker consume. */
  list: AppModule[];
  /** The jobs of the modules WORKER_JOBS selects (by default every module's), for the worker. */
  jobs: JobModule[];
  close(): Promise<void>;
}

function createModules(
  core: Core,
  parts: {
    usage: UsageTracker;
    payments: PaymentProviders;
    sources: readonly RegistrySource[];
    search: CompanySearchEngine;
    ownsSearch: boolean;
    transport: Transporter | null;
    overrides: PartOverrides;
  },
) {
  const { config, db, logger, clock } = core;
  const importCompany = createCompanyImporter({ db, logger, clock, sources: parts.sources });
  const domain = {
    accounts: createAccountsModule({ db, clock, publicBaseUrl: config.publicBaseUrl }),
    tokens: createTokensModule({
      db,
      clock,
      usage: parts.usage,
      cacheSize: config.tokenCacheSize,
      onError: (e) =>
        logger.warn({ err: e }, 'token cache: the LISTEN connection failed; serving without the cache until it listens again'),
    }),
    wallet: createWalletModule({ db, clock, logger, config, payments: parts.payments }),
    stats: createStatsModule({ db }),
    companies: createCompaniesModule({ db, config, logger, clock, search: parts.search, ownsSearch: parts.ownsSearch, importCompany }),
    match: createMatchModule({ db, logger, engine: parts.overrides.matchEngine }),
    dictionaries: createDictionariesModule(),
    watchlist: createWatchlistModule({ db, config, clock, logger, importCompany }),
    mail: createMailModule({ db, logger, clock, transport: parts.transport, mailFrom: config.mailFrom }),
    registry: createRegistryModule({ config, db, logger, clock }),
    sources: createSourcesModule({ db, config, clock }),
    webhooks: createWebhooksModule({
      db,
      clock,
      config,
      logger,
      resolve: parts.overrides.webhookResolve,
      attemptTimeoutMs: parts.overrides.webhookAttemptTimeoutMs,
    }),
  };
  // Built last: its tools call the services above.
  const mcp = createMcpModule({
    db,
    logger,
    prices: config.prices,
    companies: domain.companies.service,
    watchlist: domain.watchlist.service,
    events: domain.watchlist.events,
    wallet: domain.wallet.service,
    match: { service: domain.match.service, operation: 'companies.match' },
  });
  return { ...domain, mcp };
}

export function compose(core: Core, overrides: PartOverrides = {}): Composition {
  const { config, db, logger } = core;
  const usage = createUsageTracker(db, { onError: (e) => logger.warn({ err: e }, 'token usage flush failed') });
  const payments = overrides.payments ?? createPaymentProviders(config);
  const sourceLogger = { debug() {}, info: logger.info.bind(logger), warn: logger.warn.bind(logger), error: logger.warn.bind(logger) };
  const ownedSources = overrides.registrySources ? [] : createLiveSources(config, { logger: sourceLogger, clock: core.clock });
  const sources = overrides.registrySources ?? ownedSources;
  const search = overrides.companySearch ?? createCompanySearchEngine({ db, logger, ...overrides.companySearchOptions });
  const ownsSearch = !overrides.companySearch;
  const ownedTransport = overrides.mailTransport === undefined && config.smtpUrl ? createMailTransport(config.smtpUrl) : null;
  const transport = overrides.mailTransport === undefined ? ownedTransport : overrides.mailTransport;

  const modules = createModules(core, { usage, payments, sources, search, ownsSearch, transport, overrides });
  const list: AppModule[] = Object.values(modules);
  for (const m of list)
    if (m.jobs && !(JOB_MODULES as readonly string[]).includes(m.name))
      throw new Error(`The module ${m.name} has jobs but is not in JOB_MODULES (src/config.ts): WORKER_JOBS could not select it`);
  // The other modules' jobs stay queued for a worker process that selects them (graphile-worker
  // takes only jobs whose task it has).
  const jobs = list.flatMap((m) => (m.jobs && (config.workerJobs as readonly string[]).includes(m.name) ? [m.jobs] : []));
  let closed: Promise<void> | null = null;
  return {
    ...core,
    usage,
    companySearch: search,
    modules,
    list,
    jobs,
    close() {
      closed ??= (async () => {
        await usage.stop();
        if (ownsSearch) await search.stop();
        await Promise.allSettled(ownedSources.map(async (s) => s.close?.()));
        ownedTransport?.close();
        await Promise.allSettled(list.map(async (m) => m.close?.()));
      })();
      return closed;
    },
  };
}
