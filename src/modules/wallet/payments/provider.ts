import type { CreditPackage, PaymentProviderName } from '../../../config.ts';

export interface CheckoutRequest {
  paymentRef: string;
  package: CreditPackage;
  /** The payer's e-mail, prefilled on the provider's page. */
  email: string;
  expiresAt: Date;
  /** Where the payer lands after paying, or after leaving the checkout. */
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutSession {
  /** The provider's id of the checkout (Stripe `cs_…`); null for the dev checkout. */
  sessionId: string | null;
  url: string;
  expiresAt: Date;
}

/** What the provider says of a checkout the service still holds as pending. */
export type SessionState = 'paid' | 'open' | 'processing' | 'failed' | 'expired';

/**
 * A payment notification, read from the provider's signed message: which payment, and what
 * happened to it. The settlement (settle.ts) applies it idempotently.
 */
export interface PaymentNotification {
  paymentRef: string | null;
  sessionId: string;
  outcome: 'paid' | 'failed' | 'expired';
}

/**
 * One interface for every way to take money. Adapters: `dev` (the service's own checkout page)
 * and `stripe` (Stripe Checkout Sessions). Nothing here touches the database.
 */
export interface PaymentProvider {
  readonly name: PaymentProviderName;
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /**
   * For the expiry job: the provider's view of a stale pending checkout; an open one is closed at
   * the provider first, so that it can no longer be paid once the service has given it up.
   */
  closeStaleCheckout(sessionId: string | null): Promise<SessionState>;
}

/** The provider could not be reached or refused the request (answered 502 to the client). */
export class PaymentProviderError extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'PaymentProviderError';
  }
}
