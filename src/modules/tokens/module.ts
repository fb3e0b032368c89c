import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppModule } from '../module.ts';
import { createAuthenticator } from './authenticate.ts';
import { tokenRoutes } from './routes.ts';
import { createTokensService } from './service.ts';
import type { UsageTracker } from './usage.ts';

/** Master and API tokens: management routes, and the authenticator every request goes through. */
export function createTokensModule(deps: { db: Db; clock: Clock; usage: UsageTracker }) {
  const service = createTokensService(deps);
  return {
    name: 'tokens',
    service,
    authenticator: createAuthenticator(deps),
    routes: async (api) => {
      await api.register(tokenRoutes({ tokens: service, clock: deps.clock }));
    },
  } satisfies AppModule & { service: unknown; authenticator: unknown };
}
