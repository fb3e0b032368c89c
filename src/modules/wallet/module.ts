import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AppModule } from '../module.ts';
import { checkoutRoutes } from './checkout-routes.ts';
import { createWalletJobs } from './jobs.ts';
import type { PaymentProviders } from './payments/index.ts';
import { walletRoutes } from './routes.ts';
import { createWalletService } from './service.ts';

/** The credit wallet: balance and ledger, packages, checkout (dev page or Stripe) and payment expiry (docs/credits.md). */
export function createWalletModule(deps: { db: Db; clock: Clock; logger: Logger; config: Config; payments: PaymentProviders }) {
  const service = createWalletService(deps);
  return {
    name: 'wallet',
    service,
    routes: async (api) => {
      await api.register(walletRoutes({ wallet: service }));
      await api.register(
        checkoutRoutes({
          wallet: service,
          devCheckout: deps.config.paymentProvider === 'dev',
          stripeWebhook: deps.payments.stripe !== null,
        }),
      );
    },
    jobs: createWalletJobs({ wallet: service, logger: deps.logger }),
  } satisfies AppModule & { service: unknown };
}
