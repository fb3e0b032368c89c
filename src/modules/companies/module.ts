import type { Config } from '../../config.ts';
import type { Log } from '../../logger.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ImportCompany } from '../../registry/import.ts';
import type { AppModule } from '../module.ts';
import { companyRoutes } from './routes.ts';
import type { CompanySearchEngine } from './search-engine.ts';
import { createCompaniesService } from './service.ts';

/**
 * Snapshot and search. The search engine is a process part (src/composition.ts): its index is
 * built once the HTTP service is ready (searches run in SQL until then).
 */
export function createCompaniesModule(deps: {
  db: Db;
  config: Config;
  logger: Log;
  clock: Clock;
  search: CompanySearchEngine;
  importCompany: ImportCompany;
  ownsSearch: boolean;
}) {
  const service = createCompaniesService(deps);
  return {
    name: 'companies',
    service,
    routes: async (api) => {
      await api.register(companyRoutes({ companies: service }));
    },
    startServing: async () => {
      if (deps.ownsSearch) deps.search.start();
    },
  } satisfies AppModule & { service: unknown };
}
