import type { FastifyInstance } from 'fastify';
import type { ExtraRouteDeps } from '../index.ts';
import { companyRoutes } from './routes.ts';
import { createCompanySearchEngine } from './search-engine.ts';
import { createCompaniesService } from './service.ts';

/**
 * The companies module: snapshot and search. The search index is built in the background once
 * the server is ready (searches run in SQL until then) and let go when it closes; an engine passed
 * in (tests, benchmarks) is left to its owner.
 */
export function companiesPlugin(deps: ExtraRouteDeps) {
  return async (api: FastifyInstance) => {
    const search = deps.companySearch ?? createCompanySearchEngine({ db: deps.db, logger: deps.logger });
    if (!deps.companySearch) {
      api.addHook('onReady', async () => search.start());
      api.addHook('onClose', async () => search.stop());
    }
    const companies = createCompaniesService({
      db: deps.db, config: deps.config, logger: deps.logger, clock: deps.clock, search, sources: deps.registrySources,
    });
    await api.register(companyRoutes({ companies }));
  };
}
