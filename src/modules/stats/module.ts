import type { Db } from '../../db/database.ts';
import type { AppModule } from '../module.ts';
import { statsRoutes } from './routes.ts';

/** Public registry statistics (docs/registry.md). */
export function createStatsModule(deps: { db: Db }) {
  return {
    name: 'stats',
    routes: async (api) => {
      await api.register(statsRoutes(deps));
    },
  } satisfies AppModule;
}
