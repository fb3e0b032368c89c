import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppModule } from '../module.ts';
import { sourcesRoutes } from './routes.ts';
import { createSourcesService, type SourcesService } from './service.ts';

/** Registry sources' freshness and health (docs/sources.md); its metrics are in ./metrics.ts. */
export function createSourcesModule(deps: {
  db: Db;
  config: Pick<Config, 'registrySources'>;
  clock: Clock;
}): AppModule & { service: SourcesService } {
  const service = createSourcesService(deps);
  return {
    name: 'sources',
    service,
    routes: async (api) => {
      await api.register(sourcesRoutes({ service }));
    },
    startServing: () => service.markConfigured(),
  };
}
