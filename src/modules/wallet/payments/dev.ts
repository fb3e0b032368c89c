import type { CheckoutRequest, CheckoutSession, PaymentProvider } from './provider.ts';

/** The dev checkout page of a payment (served by checkout-routes.ts). */
export function devCheckoutUrl(publicBaseUrl: string, paymentRef: string): string {
  return `${publicBaseUrl}/api/v1/wallet/checkout/${encodeURIComponent(paymentRef)}`;
}

/**
 * Development and demonstrations: the checkout is the service's own page, with `Pay` (confirms)
 * and `Cancel` (fails the payment). No money moves and nothing leaves the process.
 */
export function createDevPaymentProvider(deps: { publicBaseUrl: string }): PaymentProvider {
  return {
    name: 'dev',
    async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
      return { sessionId: null, url: devCheckoutUrl(deps.publicBaseUrl, request.paymentRef), expiresAt: request.expiresAt };
    },
    // The page stops taking payments by itself once the payment is no longer pending.
    async closeStaleCheckout() {
      return 'expired';
    },
  };
}
