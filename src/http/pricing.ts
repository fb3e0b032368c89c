import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import type { PriceKey } from '../config.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import { InsufficientCreditsError } from '../lib/errors.ts';
import { isTokenActive } from '../modules/tokens/authenticate.ts';
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
     * With `chargedBy: 'service'`: the service's charge checks in the same statement that the
     * token is still usable (`ifTokenActive`), so the request may authenticate from the token cache.
     */
    tokenCheckedByCharge?: boolean;
    /**
     * Units a request asks for, known from its validated input (e.g. the queries of a batch): the
     * balance check before the handler then requires the whole price, and the charge takes it.
     * Without it a request is one unit unless its handler sets `request.chargeUnits`.
     */
    unitsOf?: (request: FastifyRequest) => number;
    /**
     * The input checks of the route's service that the schema cannot express (checksums, filter
     * values, a batch's items): run before the balance check and throwing the service's
     * ValidationError, so bad input is a 422 whatever the balance, never a 402.
     */
    checkInput?: (request: FastifyRequest) => void;
  }
  interface FastifyRequest {
    /** Units of the priced operation this request performed (default 1; 0 makes it free). */
    chargeUnits: number;
  }
}

/** The headers that tell a client what a request cost (none when it was free). */
export function reportCharge(reply: FastifyReply, charged: number, balanceAfter: number | null): void {
  if (charged <= 0) return;
  reply.header('x-credits-charged', String(charged));
  reply.header('x-credits-remaining', String(balanceAfter));
}

/** How long the balance an account's last charge left may stand in for reading it (see installPricing). */
const BALANCE_HINT_MS = 30_000;
const BALANCE_HINTS = 50_000;

const INSUFFICIENT_BODY = (balance: number, required: number) => ({
  message: 'Insufficient credits',
  code: 'INSUFFICIENT_CREDITS' as const,
  balance,
  required,
});

function describePrice(credits: number, operation: PriceKey, chargedBy: 'route' | 'service', perUnit: boolean): string {
  const unit = chargedBy === 'service' || perUnit ? 'per unit' : 'per successful request';
  if (credits === 0) return `**Price:** free (\`${operation}\` is priced at 0 on this service).`;
  return `**Price:** ${credits} credit${credits === 1 ? '' : 's'} ${unit} (\`${operation}\`). Nothing is charged when the request fails; too few credits: 402.`;
}

/**
 * The one mechanism that sells data routes. A route declares `config: { price: '<operation>' }`:
 * - before the handler (after authentication, validation and the route's `checkInput`), a cheap
 *   check answers 402 when the balance is below one unit's price (the whole price with `unitsOf`),
 *   so no work is done for a wallet that cannot pay. The balance the account's last charge in
 *   this process left (at most BALANCE_HINT_MS old) stands in for a read when it covers the
 *   price; when it does not, or there is none, the balance is read;
 * - when the response is a success (< 400), onSend takes `price × request.chargeUnits` with one
 *   conditional ledger entry, in one statement that also checks that the token is still usable
 *   (the principal may come from the token cache). If a concurrent request (or another process)
 *   spent the credits in between, the response is replaced by the 402 body; if the token was
 *   revoked or expired meanwhile, by the 401 body: the caller never receives what it did not pay for.
 * Routes with `chargedBy: 'service'` charge in their own transaction (`chargeCredits`).
 */
export function installPricing(app: FastifyInstance, deps: { db: Db; prices: PriceTable; clock: Clock }): void {
  const { db, prices, clock } = deps;
  const hints = new Map<string, { balance: number; at: number }>();
  const remember = (accountId: string, balance: number) => {
    hints.delete(accountId);
    if (hints.size >= BALANCE_HINTS) hints.delete(hints.keys().next().value!);
    hints.set(accountId, { balance, at: performance.now() });
  };
  app.decorateRequest('chargeUnits', 1);

  app.addHook('onRoute', (route) => {
    const operation = route.config?.price;
    if (!operation) return;
    if (!(operation in prices)) throw new Error(`Route ${route.method} ${route.url}: unknown price key "${operation}"`);
    if ((route.config?.auth ?? 'none') === 'none') throw new Error(`Route ${route.method} ${route.url} is priced but needs no credential`);
    const schema = (route.schema ?? {}) as Record<string, unknown> & { response?: Record<string | number, TSchema>; description?: string };
    // A service that charges in the statement of its read (tokenCheckedByCharge) sells one answer, like a route.
    const perUnit = route.config?.chargedBy === 'service' && !route.config.tokenCheckedByCharge;
    const note = describePrice(prices[operation], operation, perUnit ? 'service' : 'route', route.config?.unitsOf !== undefined);
    route.schema = {
      ...schema,
      description: schema.description ? `${schema.description}\n\n${note}` : note,
      response: { 402: Type.Ref('InsufficientCredits'), ...(schema.response ?? {}) },
    };
  });

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const operation = request.routeOptions.config?.price;
    if (!operation || request.routeOptions.config?.chargedBy === 'service' || !request.auth) return;
    request.routeOptions.config.checkInput?.(request);
    const unitsOf = request.routeOptions.config?.unitsOf;
    if (unitsOf) request.chargeUnits = unitsOf(request);
    const required = priceOf(prices, operation, unitsOf ? request.chargeUnits : 1);
    if (required === 0) return;
    const hint = hints.get(request.auth.accountId);
    if (hint && hint.balance >= required && performance.now() - hint.at < BALANCE_HINT_MS) return;
    const balance = await readBalance(db, request.auth.accountId);
    remember(request.auth.accountId, balance);
    if (balance < required) throw new InsufficientCreditsError(balance, required);
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload) => {
    const operation = request.routeOptions.config?.price;
    if (!operation || request.routeOptions.config?.chargedBy === 'service' || !request.auth || reply.statusCode >= 400) return payload;
    const { accountId, tokenId, expiresAt } = request.auth;
    const now = clock.now();
    const r = await tryChargeCredits(db, { accountId, operation, units: request.chargeUnits, prices, ifTokenActive: { tokenId, now } });
    // A free request charges nothing, so nothing has checked a cached token yet.
    const live = !r.taken ? r.reason !== 'inactive-token' : r.charged > 0 || !request.authCached || (await isTokenActive(db, tokenId, now));
    const replace = (code: number, body: unknown) => {
      reply.code(code);
      reply.header('content-type', 'application/json; charset=utf-8');
      reply.removeHeader('content-length');
      reply.removeHeader('etag');
      return JSON.stringify(body);
    };
    if (!live) {
      const error = expiresAt && expiresAt <= now ? 'Token expired' : 'Token revoked';
      request.log.info({ operation, error }, 'token no longer usable at the charge: answering 401');
      return replace(401, { error, code: 'UNAUTHORIZED' });
    }
    if (r.taken) {
      if (r.charged > 0) remember(accountId, r.balanceAfter!);
      reportCharge(reply, r.charged, r.balanceAfter);
      return payload;
    }
    if (r.reason === 'inactive-token') throw new Error('unreachable');
    const { balance, required: amount } = r;
    remember(accountId, balance);
    request.log.info({ operation, balance, required: amount }, 'charge lost to a concurrent request: answering 402');
    return replace(402, INSUFFICIENT_BODY(balance, amount));
  });
}
