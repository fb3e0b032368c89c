import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { escapeHtml, page, wantsJson } from '../../http/html.ts';
import { errorResponses, PathIdSchema } from '../../http/schemas.ts';
import type { PaymentRow } from './payments/settle.ts';
import { WebhookSignatureError } from './payments/stripe.ts';
import { paymentView, type WalletService } from './service.ts';
import { PaymentSchema } from './routes.ts';

/** A closed payment's state, as the 409's sentence says it. */
const PAYMENT_STATE: Record<string, string> = { failed: 'has failed', expired: 'has expired', confirmed: 'is already confirmed' };

const PaymentRefParams = Type.Object({ payment_ref: PathIdSchema() });
const JSON_BODY_LIMIT = 1024 * 1024;

function money(p: PaymentRow): string {
  return `${(p.amount / 100).toFixed(2)} ${p.currency.toUpperCase()}`;
}

/** The checkout page: the dev form while a dev payment is pending, otherwise the payment's state. */
export function renderCheckoutPage(p: PaymentRow, opts: { devForm: boolean; result?: string }): string {
  const summary = `<p>Package <strong>${escapeHtml(p.package_slug)}</strong>: ${p.credits.toLocaleString('en-US')} credits for ${escapeHtml(money(p))}.</p>`;
  const state = (status: string, text: string, cls = '') =>
    `<p id="payment-status" data-status="${status}"${cls ? ` class="${cls}"` : ''} role="status">${text}</p>`;
  switch (p.status) {
    case 'pending':
      if (opts.devForm) {
        return page(
          'Checkout',
          `
<h1>regwatch checkout</h1>
${summary}
<p class="warn">Development checkout: no money is taken. Pay confirms the payment and credits the wallet; Cancel fails it.</p>
${state('pending', `Open until ${escapeHtml(p.expires_at.toISOString())}.`)}
<form method="post" action="${escapeHtml(encodeURIComponent(p.payment_ref))}">
  <button type="submit" name="action" value="pay">Pay</button>
  <button type="submit" name="action" value="cancel">Cancel</button>
</form>`,
        );
      }
      return page(
        'Payment pending',
        `
<h1>Payment pending</h1>
${summary}
${state(
  'pending',
  opts.result === 'cancel'
    ? `You left the checkout. Nothing was charged; the checkout stays open until ${escapeHtml(p.expires_at.toISOString())}.`
    : 'Waiting for the payment provider to confirm the payment. The credits are added as soon as it does; reload this page to check.',
)}`,
      );
    case 'confirmed':
      return page(
        'Payment confirmed',
        `
<h1>Payment confirmed</h1>
${summary}
${state('confirmed', `${p.credits.toLocaleString('en-US')} credits have been added to your wallet.`)}`,
      );
    case 'failed':
      return page(
        'Payment cancelled',
        `
<h1>Payment cancelled</h1>
${summary}
${state('failed', 'The payment was cancelled or failed. No credits were added; start a new top-up to try again.', 'error')}`,
      );
    case 'expired':
      return page(
        'Checkout expired',
        `
<h1>Checkout expired</h1>
${summary}
${state('expired', 'This checkout expired before it was paid. No credits were added; start a new top-up to try again.', 'error')}`,
      );
  }
}

function sendNotFound(reply: FastifyReply, json: boolean) {
  reply.header('cache-control', 'no-store');
  if (json) return reply.code(404).send({ message: 'Payment not found' });
  return reply
    .code(404)
    .type('text/html; charset=utf-8')
    .send(page('Payment not found', '<h1>Payment not found</h1><p class="error" role="alert">This checkout link is not valid.</p>'));
}

/**
 * Pages a payer's browser opens (no credential: the unguessable payment reference in the URL is
 * one), and the Stripe webhook. The dev checkout's form only works while PAYMENT_PROVIDER=dev, so
 * a production service never sells credits through it.
 */
export function checkoutRoutes(deps: { wallet: WalletService; devCheckout: boolean; stripeWebhook: boolean }): FastifyPluginAsyncTypebox {
  const { wallet } = deps;
  return async (app) => {
    app.get(
      '/wallet/checkout/:payment_ref',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['Wallet'],
          summary: 'Checkout page of a top-up (open `checkout_url` in a browser)',
          params: PaymentRefParams,
          description:
            'With the dev provider: a form with `Pay` and `Cancel`. Otherwise the page the payment provider returns to, showing the payment state. With `Accept: application/json`: the payment.',
          querystring: Type.Object({ result: Type.Optional(Type.String({ maxLength: 16 })) }),
          produces: ['text/html', 'application/json'],
          response: {
            200: Type.Union([Type.String(), Type.Object({ status: Type.Literal('success'), data: PaymentSchema })]),
            ...errorResponses({ notFound: true }),
          },
        },
      },
      async (req, reply) => {
        const json = wantsJson(req.headers.accept);
        const p = await wallet.findCheckout(req.params.payment_ref);
        if (!p) return sendNotFound(reply, json);
        reply.header('cache-control', 'no-store');
        if (json) return reply.send({ status: 'success' as const, data: paymentView(p) });
        const devForm = deps.devCheckout && p.provider === 'dev';
        return reply.type('text/html; charset=utf-8').send(renderCheckoutPage(p, { devForm, result: req.query.result }));
      },
    );

    if (deps.devCheckout) {
      app.post(
        '/wallet/checkout/:payment_ref',
        {
          config: { auth: 'none', formBody: true },
          schema: {
            tags: ['Wallet'],
            summary: 'Dev checkout: Pay or Cancel (the form submission)',
            params: PaymentRefParams,
            description:
              'Form-encoded or JSON `{action: "pay" | "cancel"}`; without `action`, Pay (the form\'s default button). Paying again after paying credits nothing more. The page answers with a redirect to the checkout page; JSON callers get the payment (409 when the action can no longer apply).',
            body: Type.Object({
              action: Type.Optional(Type.Union([Type.Literal('pay'), Type.Literal('cancel')], { description: 'Absent: `pay`.' })),
            }),
            consumes: ['application/x-www-form-urlencoded', 'application/json'],
            produces: ['text/html', 'application/json'],
            response: {
              200: Type.Object({ status: Type.Literal('success'), data: PaymentSchema }),
              409: Type.Ref('Message'),
              ...errorResponses({ notFound: true, validation: true }),
            },
          },
        },
        async (req, reply) => {
          const json = wantsJson(req.headers.accept) || (req.headers['content-type'] ?? '').includes('application/json');
          const raw = req.body.action ?? 'pay';
          const existing = await wallet.findCheckout(req.params.payment_ref);
          if (!existing || existing.provider !== 'dev') return sendNotFound(reply, json);
          const { payment } = await wallet.devCheckoutAction(req.params.payment_ref, raw);
          reply.header('cache-control', 'no-store');
          if (!json) {
            // Post/Redirect/Get: reloading the result page never submits the form again.
            return reply.redirect(encodeURIComponent(payment.payment_ref), 303);
          }
          const wanted = raw === 'pay' ? 'confirmed' : 'failed';
          if (payment.status !== wanted) {
            return reply.code(409).send({
              message: `The payment ${PAYMENT_STATE[payment.status] ?? `is ${payment.status}`}: it can no longer be ${raw === 'pay' ? 'paid' : 'cancelled'}.`,
            });
          }
          return reply.send({ status: 'success' as const, data: paymentView(payment) });
        },
      );
    }

    if (deps.stripeWebhook) {
      // The signature covers the exact bytes Stripe sent: this route's plugin keeps the raw body.
      await app.register(async (raw) => {
        raw.removeAllContentTypeParsers();
        raw.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT }, (_req, body, done) => done(null, body));
        raw.post(
          '/wallet/webhooks/stripe',
          {
            config: { auth: 'none', rateLimitGroup: 'none' },
            schema: {
              tags: ['Wallet'],
              summary: 'Stripe webhook (checkout.session.* events)',
              description:
                "Verified with the endpoint's signing secret (`Stripe-Signature`, 5 minutes tolerance). Handles `checkout.session.completed`, `.async_payment_succeeded`, `.async_payment_failed` and `.expired`; a repeated event changes nothing.",
              response: { 200: Type.Object({ received: Type.Boolean() }), 400: Type.Ref('Message'), 500: Type.Ref('Message') },
            },
          },
          async (req, reply) => {
            const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
            const signature = req.headers['stripe-signature'];
            try {
              const r = await wallet.handleStripeWebhook(body, typeof signature === 'string' ? signature : undefined);
              req.log.info({ webhook: r }, 'stripe webhook handled');
              return reply.send({ received: true });
            } catch (e) {
              if (e instanceof WebhookSignatureError) {
                req.log.warn({ reason: e.message }, 'stripe webhook refused');
                return reply.code(400).send({ message: 'Invalid webhook signature.' });
              }
              throw e;
            }
          },
        );
      });
    }
  };
}
