import type { Db } from '../../db/database.ts';
import type { Log } from '../../logger.ts';
import type { AppModule } from '../module.ts';
import { createMatchEngine, type MatchEngine } from './engine.ts';
import { matchRoutes } from './routes.ts';
import { createMatchService } from './service.ts';

/**
 * Batch matching (POST /companies/match). Its index is its own (src/modules/match/match-index.ts),
 * built once the HTTP service is ready and kept in step with the registry's runs.
 */
export function createMatchModule(deps: { db: Db; logger: Log; engine?: MatchEngine }) {
  const engine = deps.engine ?? createMatchEngine({ db: deps.db, logger: deps.logger });
  const service = createMatchService({ db: deps.db, engine });
  return {
    name: 'match',
    service,
    engine,
    routes: async (api) => {
      await api.register(matchRoutes({ match: service }));
    },
    startServing: async () => {
      engine.start();
    },
    close: async () => {
      if (!deps.engine) await engine.stop();
    },
  } satisfies AppModule & { service: unknown; engine: MatchEngine };
}
