import { randomInt } from 'node:crypto';
import { pageMetaWithLinks } from '../../lib/pagination.ts';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config, CreditPackage } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { NotFoundError, UpstreamError, ValidationError } from '../../lib/errors.ts';
import type { PaymentProviders } from './payments/index.ts';
import { PaymentProviderError } from './payments/provider.ts';
import { closePayment, confirmPayment, type PaymentRow, type SettleOutcome } from './payments/settle.ts';
import { WebhookSignatureError } from './payments/stripe.ts';

/** How long a checkout can be paid (Stripe accepts 30 minutes to 24 hours). */
export const CHECKOUT_TTL_MS = 60 * 60 * 1000;

const REF_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `pay_` + 24 base62 characters: the dev checkout URL is its only credential, so it must not be guessable. */
export function newPaymentRef(): string {
  let s = 'pay_';
  for (let i = 0; i < 24; i++) s += REF_ALPHABET[randomInt(REF_ALPHABET.length)];
  return s;
}

/** Minor currency units as a decimal string: 4900 -> "49.00". */
export function formatMoney(amount: number): string {
  return (amount / 100).toFixed(2);
}

export function packageView(p: CreditPackage) {
  return { slug: p.slug, credits: p.credits, price: formatMoney(p.amount), currency: p.currency.toUpperCase() };
}

export function paymentView(p: PaymentRow) {
  return {
    payment_ref: p.payment_ref,
    status: p.status,
    package: p.package_slug,
    credits: p.credits,
    price: formatMoney(p.amount),
    currency: p.currency.toUpperCase(),
    provider: p.provider,
    checkout_url: p.status === 'pending' ? p.checkout_url : null,
    created_at: p.created_at.toISOString(),
    expires_at: p.expires_at.toISOString(),
    completed_at: p.completed_at?.toISOString() ?? null,
  };
}
export type PaymentView = ReturnType<typeof paymentView>;

export interface WalletDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'packages' | 'publicBaseUrl' | 'paymentProvider'>;
  payments: PaymentProviders;
}

export function checkoutPageUrl(publicBaseUrl: string, paymentRef: string, result?: 'success' | 'cancel'): string {
  return `${publicBaseUrl}/api/v1/wallet/checkout/${encodeURIComponent(paymentRef)}${result ? `?result=${result}` : ''}`;
}

export function createWalletService(deps: WalletDeps) {
  const { db, clock, logger, config, payments } = deps;

  async function findPaymentByRef(paymentRef: string): Promise<PaymentRow | null> {
    if (paymentRef.length > 64) return null;
    return (await db.selectFrom('payments').selectAll().where('payment_ref', '=', paymentRef).executeTakeFirst()) ?? null;
  }

  async function settle(
    p: Pick<PaymentRow, 'payment_ref' | 'provider'>,
    outcome: 'paid' | 'failed' | 'expired',
    extra: { sessionId?: string; onlyBeforeExpiry?: boolean } = {},
  ): Promise<SettleOutcome> {
    const target = { paymentRef: p.payment_ref, provider: p.provider, now: clock.now(), ...extra };
    const r = outcome === 'paid' ? await confirmPayment(db, target) : await closePayment(db, { ...target, status: outcome });
    if (r.changed) logger.info({ payment_ref: p.payment_ref, status: r.payment.status, credits: r.payment.credits }, 'payment settled');
    return r;
  }

  /**
   * A dev checkout past its expiry reads as `expired` at once (closed now, as its expiry job would
   * close it): nothing can pay it any more. A Stripe one stays `pending` until the job has asked
   * Stripe, since its session may have been paid at the last moment.
   */
  async function closedIfLapsed(p: PaymentRow): Promise<PaymentRow> {
    if (p.status !== 'pending' || p.provider !== 'dev' || p.expires_at > clock.now()) return p;
    const r = await settle(p, 'expired');
    return r.payment ?? p;
  }

  /** One stale payment: asked about at its provider, then settled; what became of it (null: settled meanwhile). */
  async function expireOne(p: {
    payment_ref: string;
    provider: 'dev' | 'stripe';
    provider_session_id: string | null;
  }): Promise<'expired' | 'confirmed' | 'failed' | 'left' | null> {
    const provider = payments.byName(p.provider);
    if (!provider) {
      logger.warn({ payment_ref: p.payment_ref, provider: p.provider }, 'stale payment of a provider that is not configured: left pending');
      return 'left';
    }
    let state;
    try {
      state = await provider.closeStaleCheckout(p.provider_session_id);
    } catch (e) {
      logger.warn({ err: e, payment_ref: p.payment_ref }, 'stale payment could not be checked with its provider: left pending');
      return 'left';
    }
    const outcome = state === 'paid' ? 'paid' : state === 'failed' ? 'failed' : state === 'expired' ? 'expired' : null;
    if (!outcome) return 'left';
    const r = await settle(p, outcome, p.provider_session_id ? { sessionId: p.provider_session_id } : {});
    // Settled meanwhile (its webhook came first): nothing changed here, and nothing is counted.
    if (!r.changed) return null;
    return outcome === 'paid' ? 'confirmed' : outcome;
  }

  return {
    async getWallet(accountId: string) {
      const w = await db
        .selectFrom('wallets')
        .select(['balance', 'total_purchased'])
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      return { balance: Number(w?.balance ?? 0), total_purchased: Number(w?.total_purchased ?? 0) };
    },

    /** Newest first; amounts as two-decimal strings and created_at with microseconds, formatted by PostgreSQL. */
    async listTransactions(accountId: string, page: number, perPage: number) {
      const [rows, count] = await Promise.all([
        db
          .selectFrom('wallet_transactions')
          .select([
            'type',
            sql<string>`(amount::numeric(20, 2))::text`.as('amount'),
            sql<string>`(balance_after::numeric(20, 2))::text`.as('balance_after'),
            'description',
            sql<string>`to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('created_at'),
          ])
          .where('account_id', '=', accountId)
          .orderBy('id', 'desc')
          .limit(perPage)
          .offset((page - 1) * perPage)
          .execute(),
        db
          .selectFrom('wallet_transactions')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow(),
      ]);
      return { data: rows, meta: pageMetaWithLinks(Number(count.n), page, perPage) };
    },

    listPackages() {
      return config.packages.map(packageView);
    },

    async topup(account: { accountId: string; email: string }, packageSlug: string) {
      const pkg = config.packages.find((p) => p.slug === packageSlug);
      if (!pkg) {
        throw new ValidationError({
          package_slug: [`The selected package slug is invalid. Available packages: ${config.packages.map((p) => p.slug).join(', ')}.`],
        });
      }
      const provider = payments.active;
      const now = clock.now();
      const paymentRef = newPaymentRef();
      await db
        .insertInto('payments')
        .values({
          payment_ref: paymentRef,
          account_id: account.accountId,
          provider: provider.name,
          package_slug: pkg.slug,
          credits: pkg.credits,
          amount: pkg.amount,
          currency: pkg.currency,
          status: 'pending',
          created_at: now,
          updated_at: now,
          expires_at: new Date(now.getTime() + CHECKOUT_TTL_MS),
        })
        .execute();
      let session;
      try {
        // Outside any transaction: the pending row exists before the provider hears of it, so a
        // notification can always find its payment.
        session = await provider.createCheckout({
          paymentRef,
          package: pkg,
          email: account.email,
          expiresAt: new Date(now.getTime() + CHECKOUT_TTL_MS),
          successUrl: checkoutPageUrl(config.publicBaseUrl, paymentRef, 'success'),
          cancelUrl: checkoutPageUrl(config.publicBaseUrl, paymentRef, 'cancel'),
        });
      } catch (e) {
        logger.error({ err: e, payment_ref: paymentRef }, 'checkout could not be created');
        await closePayment(db, { paymentRef, provider: provider.name, now: clock.now(), status: 'failed' });
        if (e instanceof PaymentProviderError) throw new UpstreamError('The payment provider is not available right now. Try again later.');
        throw e;
      }
      const payment = await db
        .updateTable('payments')
        .set({ provider_session_id: session.sessionId, checkout_url: session.url, expires_at: session.expiresAt, updated_at: clock.now() })
        .where('payment_ref', '=', paymentRef)
        .returningAll()
        .executeTakeFirstOrThrow();
      return {
        checkout_url: session.url,
        package: pkg.slug,
        credits: pkg.credits,
        payment_ref: paymentRef,
        price: formatMoney(pkg.amount),
        currency: pkg.currency.toUpperCase(),
        expires_at: payment.expires_at.toISOString(),
      };
    },

    async getPayment(accountId: string, paymentRef: string): Promise<PaymentView> {
      const p = await findPaymentByRef(paymentRef);
      // Another account's payment is indistinguishable from a missing one.
      if (!p || p.account_id !== accountId) throw new NotFoundError('Payment not found');
      return paymentView(await closedIfLapsed(p));
    },

    /** The checkout page's view of a payment (the reference in the URL is the credential). */
    async findCheckout(paymentRef: string): Promise<PaymentRow | null> {
      const p = await findPaymentByRef(paymentRef);
      return p && closedIfLapsed(p);
    },

    /**
     * The dev checkout's buttons. Pay confirms (once, however often it is submitted) unless the
     * checkout has expired; Cancel fails the payment. Only while the dev provider is configured.
     */
    async devCheckoutAction(paymentRef: string, action: 'pay' | 'cancel'): Promise<{ changed: boolean; payment: PaymentRow }> {
      const p = await findPaymentByRef(paymentRef);
      if (!p || p.provider !== 'dev' || config.paymentProvider !== 'dev') throw new NotFoundError('Payment not found');
      if (action === 'cancel') {
        const r = await settle(p, 'failed');
        return { changed: r.changed, payment: r.payment ?? p };
      }
      const r = await settle(p, 'paid', { onlyBeforeExpiry: true });
      if (!r.changed && r.payment?.status === 'pending') {
        // Pending but past its expiry: close it now rather than wait for the job.
        const closed = await settle(p, 'expired');
        return { changed: false, payment: closed.payment ?? p };
      }
      return { changed: r.changed, payment: r.payment ?? p };
    },

    /**
     * A Stripe webhook: verified, then applied. Returns what was done, for the log and the answer;
     * throws WebhookSignatureError for a bad signature.
     */
    async handleStripeWebhook(
      rawBody: Buffer,
      signature: string | undefined,
    ): Promise<{ result: 'ignored' | 'unknown-payment' | 'applied' | 'no-change'; status?: string }> {
      const stripe = payments.stripe;
      if (!stripe) throw new WebhookSignatureError('Stripe is not configured');
      const n = stripe.readWebhook(rawBody, signature, clock.now().getTime());
      if (!n) return { result: 'ignored' };
      let ref = n.paymentRef;
      if (!ref) {
        const bySession = await db
          .selectFrom('payments')
          .select('payment_ref')
          .where('provider_session_id', '=', n.sessionId)
          .executeTakeFirst();
        ref = bySession?.payment_ref ?? null;
      }
      if (!ref) {
        logger.warn({ session_id: n.sessionId }, 'stripe webhook for a checkout session this service does not know');
        return { result: 'unknown-payment' };
      }
      const r = await settle({ payment_ref: ref, provider: 'stripe' }, n.outcome, { sessionId: n.sessionId });
      if (!r.payment) {
        logger.warn({ session_id: n.sessionId, payment_ref: ref }, 'stripe webhook for a payment this service does not know');
        return { result: 'unknown-payment' };
      }
      return { result: r.changed ? 'applied' : 'no-change', status: r.payment.status };
    },

    /**
     * The expiry job: pending payments past their expiry are closed. A provider checkout is asked
     * first (and closed there), so a payment that did go through is confirmed, never expired.
     * Every stale payment is visited, a page of `pageSize` at a time in id order (ids are exact;
     * a timestamp read into a Date loses its microseconds, so it cannot serve as a page's key):
     * payments the provider keeps pending (a delayed method, a provider that is down or not
     * configured) stay stale, and a job that read only the oldest page would never reach a paid
     * top-up behind them.
     */
    async expireStalePayments(pageSize = 200): Promise<{ expired: number; confirmed: number; failed: number; left: number }> {
      const counts = { expired: 0, confirmed: 0, failed: 0, left: 0 };
      const now = clock.now();
      let after: string | null = null;
      for (;;) {
        let query = db
          .selectFrom('payments')
          .select(['id', 'payment_ref', 'provider', 'provider_session_id'])
          .where('status', '=', 'pending')
          .where('expires_at', '<=', now);
        if (after !== null) query = query.where('id', '>', after);
        const page = await query.orderBy('id').limit(pageSize).execute();
        for (const p of page) {
          const outcome = await expireOne(p);
          if (outcome !== null) counts[outcome]++;
        }
        if (page.length < pageSize) return counts;
        after = page[page.length - 1]!.id;
      }
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
