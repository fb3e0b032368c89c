import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppModule } from '../module.ts';
import { accountRoutes } from './routes.ts';
import { createAccountJobs, createAccountsService } from './service.ts';

/** Registration, initialisation, account details and recovery (docs/authentication.md). */
export function createAccountsModule(deps: { db: Db; clock: Clock; publicBaseUrl: string }) {
  const service = createAccountsService(deps);
  return {
    name: 'accounts',
    service,
    routes: async (api) => {
      await api.register(accountRoutes({ accounts: service }));
    },
    jobs: createAccountJobs(deps),
  } satisfies AppModule & { service: unknown };
}
