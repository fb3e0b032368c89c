import type { Config } from '../../../config.ts';
import { createDevPaymentProvider } from './dev.ts';
import type { PaymentProvider } from './provider.ts';
import { createStripePaymentProvider, type StripePaymentProvider } from './stripe.ts';

export interface PaymentProviders {
  /** The provider new top-ups use (PAYMENT_PROVIDER). */
  active: PaymentProvider;
  /** Stripe, whenever it is configured: its webhooks and stale checkouts are handled even after a switch to dev. */
  stripe: StripePaymentProvider | null;
  byName(name: 'dev' | 'stripe'): PaymentProvider | null;
}

export function createPaymentProviders(
  config: Pick<Config, 'paymentProvider' | 'publicBaseUrl' | 'stripeSecretKey' | 'stripeWebhookSecret' | 'stripeApiBase'>,
): PaymentProviders {
  const dev = createDevPaymentProvider({ publicBaseUrl: config.publicBaseUrl });
  const stripe =
    config.stripeSecretKey && config.stripeWebhookSecret
      ? createStripePaymentProvider({
          secretKey: config.stripeSecretKey,
          webhookSecret: config.stripeWebhookSecret,
          apiBase: config.stripeApiBase,
        })
      : null;
  const active = config.paymentProvider === 'stripe' ? stripe : dev;
  // loadConfig already refuses PAYMENT_PROVIDER=stripe without its keys.
  if (!active) throw new Error('PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  return { active, stripe, byName: (name) => (name === 'dev' ? dev : stripe) };
}
