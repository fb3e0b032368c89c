import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ImportCompany } from '../../registry/import.ts';
import type { AppModule } from '../module.ts';
import { createEventsService } from './feed.ts';
import { createWatchlistJobs } from './jobs.ts';
import { watchlistRoutes } from './routes.ts';
import { createWatchlistService } from './service.ts';

/** The watchlist (add, list, remove, request status) and both event feeds (docs/watchlist.md). */
export function createWatchlistModule(deps: { db: Db; config: Config; clock: Clock; logger: Logger; importCompany: ImportCompany }) {
  const service = createWatchlistService(deps);
  const events = createEventsService(deps);
  return {
    name: 'watchlist',
    service,
    events,
    routes: async (api) => {
      await api.register(watchlistRoutes({ watchlist: service, events }));
    },
    jobs: createWatchlistJobs(deps),
  } satisfies AppModule & { service: unknown; events: unknown };
}
