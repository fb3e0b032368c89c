import type { FastifyInstance } from 'fastify';
import type { ExtraRouteDeps } from '../index.ts';
import { createEventsService, type ImportCompany } from './feed.ts';
import { defaultImportCompany } from './jobs.ts';
import { watchlistRoutes } from './routes.ts';
import { createWatchlistService } from './service.ts';

/** The watchlist module's HTTP side: add, watched list, remove, request status and both event feeds. */
export function watchlistPlugin(deps: Pick<ExtraRouteDeps, 'config' | 'db' | 'clock' | 'logger'> & { importCompany?: ImportCompany }) {
  return async (api: FastifyInstance) => {
    const importCompany = deps.importCompany ?? defaultImportCompany(deps);
    const watchlist = createWatchlistService({ db: deps.db, config: deps.config, clock: deps.clock });
    const events = createEventsService({ db: deps.db, clock: deps.clock, importCompany });
    await api.register(watchlistRoutes({ watchlist, events }));
  };
}
