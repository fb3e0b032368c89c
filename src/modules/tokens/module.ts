import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppModule } from '../module.ts';
import { createAuthenticator } from './authenticate.ts';
import { tokenRoutes } from './routes.ts';
import { createTokenCache } from './token-cache.ts';
import { createTokensService } from './service.ts';
import type { UsageTracker } from './usage.ts';

/**
 * Master and API tokens: management routes, and the authenticator every request goes through,
 * with its token cache (trusted only while this process listens for changes: started with serving).
 */
export function createTokensModule(deps: { db: Db; clock: Clock; usage: UsageTracker; cacheSize: number; onError?: (e: unknown) => void }) {
  const service = createTokensService(deps);
  const cache = createTokenCache({ db: deps.db, maxEntries: deps.cacheSize, onError: deps.onError });
  return {
    name: 'tokens',
    service,
    cache,
    authenticator: createAuthenticator({ ...deps, cache }),
    routes: async (api) => {
      await api.register(tokenRoutes({ tokens: service, clock: deps.clock }));
    },
    startServing: () => cache.start(),
    close: () => cache.stop(),
  } satisfies AppModule & { service: unknown; cache: unknown; authenticator: unknown };
}
