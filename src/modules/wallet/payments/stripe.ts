import Stripe from 'stripe';
import type { CheckoutRequest, CheckoutSession, PaymentNotification, PaymentProvider, SessionState } from './provider.ts';
import { PaymentProviderError } from './provider.ts';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Tests point the SDK at a local fake API (STRIPE_API_BASE). */
  apiBase?: string;
}

/** Seconds a signed webhook stays acceptable (Stripe's recommended tolerance). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export function createStripeClient(settings: StripeSettings): Stripe {
  const options: Stripe.StripeConfig = { maxNetworkRetries: 2, timeout: 15_000, appInfo: { name: 'regwatch' } };
  if (settings.apiBase) {
    const u = new URL(settings.apiBase);
    options.host = u.hostname;
    options.protocol = u.protocol === 'http:' ? 'http' : 'https';
    options.port = u.port || (u.protocol === 'http:' ? '80' : '443');
  }
  return new Stripe(settings.secretKey, options);
}

export class WebhookSignatureError extends Error {}

export interface StripePaymentProvider extends PaymentProvider {
  /**
   * Verifies the `Stripe-Signature` of a raw webhook body (HMAC with the endpoint secret, and a
   * timestamp within the tolerance of `receivedAtMs`) and reads what it says about a payment.
   * Returns null for events that concern no payment state. Throws WebhookSignatureError.
   */
  readWebhook(rawBody: Buffer, signature: string | undefined, receivedAtMs: number): PaymentNotification | null;
}

function sessionPaymentRef(s: Stripe.Checkout.Session): string | null {
  return s.metadata?.payment_ref ?? s.client_reference_id ?? null;
}

/** Maps a verified Stripe event onto the payment state machine (pure, so it is tested alone). */
export function notificationFromStripeEvent(event: Stripe.Event): PaymentNotification | null {
  // A signed event without a session object (never sent by Stripe, but signed all the same) says
  // nothing about a payment: ignored (200), not a 500 that Stripe would retry for days.
  const object = (event as { data?: { object?: unknown } }).data?.object;
  if (object === null || typeof object !== 'object' || typeof (object as { id?: unknown }).id !== 'string') return null;
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const s = event.data.object;
      // A completed checkout with a delayed method (bank transfer, …) is still unpaid: it stays
      // pending until async_payment_succeeded or _failed.
      if (s.payment_status !== 'paid' && s.payment_status !== 'no_payment_required') return null;
      return { paymentRef: sessionPaymentRef(s), sessionId: s.id, outcome: 'paid' };
    }
    case 'checkout.session.async_payment_failed': {
      const s = event.data.object;
      return { paymentRef: sessionPaymentRef(s), sessionId: s.id, outcome: 'failed' };
    }
    case 'checkout.session.expired': {
      const s = event.data.object;
      return { paymentRef: sessionPaymentRef(s), sessionId: s.id, outcome: 'expired' };
    }
    default:
      return null;
  }
}

export function sessionState(s: Stripe.Checkout.Session): SessionState {
  if (s.status === 'expired') return 'expired';
  if (s.status === 'complete') return s.payment_status === 'unpaid' ? 'processing' : 'paid';
  return 'open';
}

/** What the PaymentIntent of a complete but unpaid session says of it (see closeStaleCheckout). */
export function paymentIntentState(intent: Stripe.PaymentIntent): SessionState {
  if (intent.status === 'succeeded') return 'paid';
  if (intent.status === 'requires_payment_method' || intent.status === 'canceled') return 'failed';
  return 'processing';
}

/** Stripe Checkout Sessions: a hosted payment page; the wallet is credited by the webhook. */
export function createStripePaymentProvider(settings: StripeSettings): StripePaymentProvider {
  const stripe = createStripeClient(settings);
  return {
    name: 'stripe',

    async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
      const p = request.package;
      let session: Stripe.Checkout.Session;
      try {
        session = await stripe.checkout.sessions.create(
          {
            mode: 'payment',
            client_reference_id: request.paymentRef,
            customer_email: request.email,
            line_items: [
              {
                quantity: 1,
                price_data: {
                  currency: p.currency,
                  unit_amount: p.amount,
                  product_data: { name: `${p.credits.toLocaleString('en-US')} regwatch credits`, description: `Credit package ${p.slug}` },
                },
              },
            ],
            metadata: { payment_ref: request.paymentRef, package_slug: p.slug, credits: String(p.credits) },
            payment_intent_data: { metadata: { payment_ref: request.paymentRef } },
            success_url: request.successUrl,
            cancel_url: request.cancelUrl,
            expires_at: Math.floor(request.expiresAt.getTime() / 1000),
          },
          // A retried request never opens a second checkout for one payment.
          { idempotencyKey: `checkout-${request.paymentRef}` },
        );
      } catch (e) {
        throw new PaymentProviderError(
          `Stripe refused or did not answer the checkout request: ${e instanceof Error ? e.message : String(e)}`,
          e,
        );
      }
      if (!session.url) throw new PaymentProviderError(`Stripe returned checkout session ${session.id} without a URL`);
      return {
        sessionId: session.id,
        url: session.url,
        expiresAt: new Date((session.expires_at ?? Math.floor(request.expiresAt.getTime() / 1000)) * 1000),
      };
    },

    async closeStaleCheckout(sessionId: string | null): Promise<SessionState> {
      if (!sessionId) return 'expired';
      try {
        let session = await stripe.checkout.sessions.retrieve(sessionId);
        if (session.status === 'open') {
          try {
            session = await stripe.checkout.sessions.expire(sessionId);
          } catch {
            // Paid or expired in the meantime: what Stripe holds now decides.
            session = await stripe.checkout.sessions.retrieve(sessionId);
          }
        }
        const state = sessionState(session);
        // A delayed payment method (a bank debit, say): the session is complete and unpaid until its
        // PaymentIntent succeeds or fails. Should the async_payment_* webhook be lost, its
        // PaymentIntent tells: a failed debit returns it to requires_payment_method (a completed
        // session takes no other payment method), a cancelled one is done too.
        if (state !== 'processing' || session.payment_intent === null) return state;
        const intentId = typeof session.payment_intent === 'string' ? session.payment_intent : session.payment_intent.id;
        return paymentIntentState(await stripe.paymentIntents.retrieve(intentId));
      } catch (e) {
        throw new PaymentProviderError(
          `Stripe could not report checkout session ${sessionId}: ${e instanceof Error ? e.message : String(e)}`,
          e,
        );
      }
    },

    readWebhook(rawBody, signature, receivedAtMs) {
      if (!signature) throw new WebhookSignatureError('Missing Stripe-Signature header');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(
          rawBody,
          signature,
          settings.webhookSecret,
          WEBHOOK_TOLERANCE_SECONDS,
          undefined,
          receivedAtMs,
        );
      } catch (e) {
        throw new WebhookSignatureError(e instanceof Error ? e.message : 'Invalid signature');
      }
      return notificationFromStripeEvent(event);
    },
  };
}
