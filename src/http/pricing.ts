import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { PriceKey } from '../config.ts';
import type { Db, DbOrTrx } from '../db/database.ts';
import { applyLedgerEntry } from '../modules/wallet/ledger.ts';
import { InsufficientCreditsError } from './errors.ts';

export type PriceTable = Readonly<Record<PriceKey, number>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation this route sells (DECISIONS 3); its credits come from `config.prices`. */
    price?: PriceKey;
    /**
     * `route` (default): the HTTP layer takes `price × request.chargeUnits` once the response is
     * a success. `service`: the operation has side effects, so its service charges inside its own
     * transaction with `chargeCredits`; the HTTP layer only documents the price.
     */
    chargedBy?: 'route' | 'service';
  }
  interface FastifyRequest {
    /** Units of the priced operation this request performed (default 1; 0 makes it free). */
    chargeUnits: number;
  }
}

const INSUFFICIENT_BODY = (balance: number, required: number) => ({ message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS' as const, balance, required });

/** Credits an operation costs for `units` units. */
export function priceOf(prices: PriceTable, operation: PriceKey, units = 1): number {
  if (!Number.isInteger(units) || units < 0) throw new RangeError(`units must be a non-negative integer (got ${units})`);
  return prices[operation] * units;
}

export async function readBalance(db: DbOrTrx, accountId: string): Promise<number> {
  const w = await db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirst();
  return Number(w?.balance ?? 0);
}

export interface ChargeArgs {
  accountId: string;
  operation: PriceKey;
  /** The charge is price × units (e.g. identifiers newly queued); default 1. */
  units?: number;
  prices: PriceTable;
  /** Idempotency key: a second charge with the same reference for the account takes nothing. */
  reference?: string;
}

export interface ChargeResult {
  /** Credits taken by this call (0 when free or already charged under the reference). */
  charged: number;
  /** Balance after the charge; null when nothing was written. */
  balanceAfter: number | null;
}

/**
 * Takes the price of an operation as one `usage` ledger row, atomically with the balance check
 * (the wallet row update only applies when the balance stays >= 0). Pass the operation's own
 * transaction so that the charge commits or rolls back with its side effects.
 * Throws InsufficientCreditsError (402) when the balance is short: let it roll the transaction back.
 */
export async function chargeCredits(trx: DbOrTrx, args: ChargeArgs): Promise<ChargeResult> {
  const amount = priceOf(args.prices, args.operation, args.units ?? 1);
  if (amount === 0) return { charged: 0, balanceAfter: null };
  const r = await applyLedgerEntry(trx, { accountId: args.accountId, type: 'usage', amount: -amount, description: args.operation, reference: args.reference });
  if (r.applied) return { charged: amount, balanceAfter: r.balanceAfter };
  if (r.reason === 'duplicate') return { charged: 0, balanceAfter: null };
  throw new InsufficientCreditsError(r.balance, amount);
}

export interface RefundArgs {
  accountId: string;
  operation: PriceKey;
  units?: number;
  prices: PriceTable;
  /** Required: a retried job must never refund twice. */
  reference: string;
  /** Defaults to `<operation> refund`. */
  description?: string;
}

/** Gives back credits of a charged operation as one `refund` ledger row (idempotent by reference). */
export async function refundCredits(trx: DbOrTrx, args: RefundArgs): Promise<{ refunded: number }> {
  const amount = priceOf(args.prices, args.operation, args.units ?? 1);
  if (amount === 0) return { refunded: 0 };
  const r = await applyLedgerEntry(trx, {
    accountId: args.accountId, type: 'refund', amount, description: args.description ?? `${args.operation} refund`, reference: args.reference,
  });
  if (r.applied) return { refunded: amount };
  if (r.reason === 'duplicate') return { refunded: 0 };
  // A positive entry fails only when the wallet does not exist.
  throw new Error(`refund for account ${args.accountId} could not be applied: no wallet`);
}

function describePrice(credits: number, operation: PriceKey, chargedBy: 'route' | 'service'): string {
  const unit = chargedBy === 'service' ? 'per unit' : 'per successful request';
  return `**Price:** ${credits} credit${credits === 1 ? '' : 's'} ${unit} (\`${operation}\`). Nothing is charged when the request fails; too few credits: 402.`;
}

/**
 * The one mechanism that sells data routes. A route declares `config: { price: '<operation>' }`:
 * - before the handler (after authentication and validation), a cheap check answers 402 when the
 *   balance is below one unit's price, so no work is done for a wallet that cannot pay;
 * - when the response is a success (< 400), onSend takes `price × request.chargeUnits` with one
 *   conditional ledger entry. If a concurrent request spent the credits in between, the response
 *   is replaced by the 402 body: the caller never receives what it did not pay for.
 * Routes with `chargedBy: 'service'` charge in their own transaction (`chargeCredits`).
 */
export function installPricing(app: FastifyInstance, deps: { db: Db; prices: PriceTable }): void {
  const { db, prices } = deps;
  app.decorateRequest('chargeUnits', 1);

  app.addHook('onRoute', (route) => {
    const operation = route.config?.price;
    if (!operation) return;
    if (!(operation in prices)) throw new Error(`Route ${route.method} ${route.url}: unknown price key "${operation}"`);
    if ((route.config?.auth ?? 'none') === 'none') throw new Error(`Route ${route.method} ${route.url} is priced but needs no credential`);
    const schema = (route.schema ?? {}) as Record<string, unknown> & { response?: Record<string | number, TSchema>; description?: string };
    const note = describePrice(prices[operation], operation, route.config?.chargedBy ?? 'route');
    route.schema = {
      ...schema,
      description: schema.description ? `${schema.description}\n\n${note}` : note,
      response: { 402: Type.Ref('InsufficientCredits'), ...(schema.response ?? {}) },
    };
  });

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const operation = request.routeOptions.config?.price;
    if (!operation || request.routeOptions.config?.chargedBy === 'service' || !request.auth) return;
    const required = priceOf(prices, operation);
    if (required === 0) return;
    const balance = await readBalance(db, request.auth.accountId);
    if (balance < required) throw new InsufficientCreditsError(balance, required);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    const operation = request.routeOptions.config?.price;
    if (!operation || request.routeOptions.config?.chargedBy === 'service' || !request.auth || reply.statusCode >= 400) return payload;
    const amount = priceOf(prices, operation, request.chargeUnits);
    if (amount === 0) return payload;
    const r = await applyLedgerEntry(db, { accountId: request.auth.accountId, type: 'usage', amount: -amount, description: operation });
    if (r.applied) {
      reply.header('x-credits-charged', String(amount));
      reply.header('x-credits-remaining', String(r.balanceAfter));
      return payload;
    }
    const balance = r.reason === 'insufficient' ? r.balance : await readBalance(db, request.auth.accountId);
    request.log.info({ operation, balance, required: amount }, 'charge lost to a concurrent request: answering 402');
    reply.code(402);
    reply.header('content-type', 'application/json; charset=utf-8');
    reply.removeHeader('content-length');
    reply.removeHeader('etag');
    return JSON.stringify(INSUFFICIENT_BODY(balance, amount));
  });
}
