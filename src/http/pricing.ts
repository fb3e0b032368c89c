import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { PriceKey } from '../config.ts';
import type { Db } from '../db/database.ts';
import { InsufficientCreditsError } from '../lib/errors.ts';
import { priceOf, readBalance, tryChargeCredits, type PriceTable } from '../modules/wallet/credits.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation this route sells (docs/credits.md, "Prices"); its credits come from `config.prices`. */
    price?: PriceKey;
    /**
     * `route` (default): the HTTP layer takes `price × request.chargeUnits` once the response is
     * a success. `service`: the operation has side effects, so its service charges inside its own
     * transaction with `chargeCredits`; the HTTP layer only documents the price.
     */
    chargedBy?: 'route' | 'service';
    /**
     * Units a request asks for, known from its validated input (e.g. the queries of a batch): the
     * balance check before the handler then requires the whole price, and the charge takes it.
     * Without it a request is one unit unless its handler sets `request.chargeUnits`.
     */
    unitsOf?: (request: FastifyRequest) => number;
  }
  interface FastifyRequest {
    /** Units of the priced operation this request performed (default 1; 0 makes it free). */
    chargeUnits: number;
  }
}

const INSUFFICIENT_BODY = (balance: number, required: number) => ({ message: 'Insufficient credits', code: 'INSUFFICIENT_CREDITS' as const, balance, required });

function describePrice(credits: number, operation: PriceKey, chargedBy: 'route' | 'service', perUnit: boolean): string {
  const unit = chargedBy === 'service' || perUnit ? 'per unit' : 'per successful request';
  return `**Price:** ${credits} credit${credits === 1 ? '' : 's'} ${unit} (\`${operation}\`). Nothing is charged when the request fails; too few credits: 402.`;
}

/**
 * The one mechanism that sells data routes. A route declares `config: { price: '<operation>' }`:
 * - before the handler (after authentication and validation), a cheap check answers 402 when the
 *   balance is below one unit's price (the whole price with `unitsOf`), so no work is done for a
 *   wallet that cannot pay;
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
    const note = describePrice(prices[operation], operation, route.config?.chargedBy ?? 'route', route.config?.unitsOf !== undefined);
    route.schema = {
      ...schema,
      description: schema.description ? `${schema.description}\n\n${note}` : note,
      response: { 402: Type.Ref('InsufficientCredits'), ...(schema.response ?? {}) },
    };
  });

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const operation = request.routeOptions.config?.price;
    if (!operation || request.routeOptions.config?.chargedBy === 'service' || !request.auth) return;
    const unitsOf = request.routeOptions.config?.unitsOf;
    if (unitsOf) request.chargeUnits = unitsOf(request);
    const required = priceOf(prices, operation, unitsOf ? request.chargeUnits : 1);
    if (required === 0) return;
    const balance = await readBalance(db, request.auth.accountId);
    if (balance < required) throw new InsufficientCreditsError(balance, required);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    const operation = request.routeOptions.config?.price;
    if (!operation || request.routeOptions.config?.chargedBy === 'service' || !request.auth || reply.statusCode >= 400) return payload;
    const r = await tryChargeCredits(db, { accountId: request.auth.accountId, operation, units: request.chargeUnits, prices });
    if (r.taken) {
      if (r.charged > 0) {
        reply.header('x-credits-charged', String(r.charged));
        reply.header('x-credits-remaining', String(r.balanceAfter));
      }
      return payload;
    }
    const { balance, required: amount } = r;
    request.log.info({ operation, balance, required: amount }, 'charge lost to a concurrent request: answering 402');
    reply.code(402);
    reply.header('content-type', 'application/json; charset=utf-8');
    reply.removeHeader('content-length');
    reply.removeHeader('etag');
    return JSON.stringify(INSUFFICIENT_BODY(balance, amount));
  });
}
