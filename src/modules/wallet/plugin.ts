import type { FastifyInstance } from 'fastify';
import type { ExtraRouteDeps } from '../index.ts';
import { checkoutRoutes } from './checkout-routes.ts';
import { createPaymentProviders } from './payments/index.ts';
import { walletRoutes } from './routes.ts';
import { createWalletService } from './service.ts';

/** The wallet module's HTTP side: wallet routes, checkout pages and the Stripe webhook. */
export function walletPlugin(deps: Pick<ExtraRouteDeps, 'config' | 'db' | 'clock' | 'logger'>) {
  return async (api: FastifyInstance) => {
    const payments = createPaymentProviders(deps.config);
    const wallet = createWalletService({ db: deps.db, clock: deps.clock, logger: deps.logger, config: deps.config, payments });
    await api.register(walletRoutes({ wallet }));
    await api.register(checkoutRoutes({ wallet, devCheckout: deps.config.paymentProvider === 'dev', stripeWebhook: payments.stripe !== null }));
  };
}
