import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isIP } from 'node:net';
import { ForbiddenError, UnauthorizedError } from '../lib/errors.ts';
import type { Authenticator, Principal } from '../modules/tokens/authenticate.ts';

/** What a route needs: `master` (Master Token only), `any` (API or Master Token) or `none`. */
export type AuthNeed = 'master' | 'any' | 'none';

/** The principal a request acts as. */
export type AuthContext = Principal;
declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
    /** The principal came from the token cache: whoever acts for the request re-checks the token (src/http/pricing.ts). */
    authCached: boolean;
    /** Why authentication failed, when a token was presented or required. */
    authError: UnauthorizedError | null;
  }
  interface FastifyContextConfig {
    auth?: AuthNeed;
  }
}

/**
 * Two steps around the rate limiter: first every request's bearer token is resolved (so the
 * limiter can count per account), then, after the limiter, the route's need is enforced.
 */
export function installAuthResolution(app: FastifyInstance, deps: { authenticator: Authenticator }): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('authCached', false);
  app.decorateRequest('authError', null);
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    if ((config?.auth ?? 'none') === 'none') return;
    const header = request.headers.authorization?.trim() ?? '';
    const m = /^Bearer(?:\s+(.*))?$/i.exec(header);
    const token = m?.[1]?.trim() ?? '';
    if (header === '' || (m && token === '')) {
      request.authError = new UnauthorizedError('Missing API token');
      return;
    }
    if (!m) {
      request.authError = new UnauthorizedError('Malformed token format');
      return;
    }
    // Only a priced route whose charge re-checks the token may trust the cache (src/http/pricing.ts).
    const useCache =
      config?.auth === 'any' && config.price !== undefined && (config.chargedBy !== 'service' || config.tokenCheckedByCharge === true);
    const result = await deps.authenticator.authenticate(token, { useCache });
    if (result.ok) {
      request.auth = result.principal;
      request.authCached = result.cached;
    } else request.authError = result.error;
  });
}

/**
 * Runs at preParsing: after every onRequest hook (the rate limiter attaches its own per route),
 * before the body is read, so a request without a valid credential costs no parsing and a 401
 * comes before any 422.
 */
export function installAuthEnforcement(app: FastifyInstance, deps: { authenticator: Authenticator }): void {
  app.addHook('preParsing', async (request: FastifyRequest) => {
    const need = request.routeOptions.config?.auth ?? 'none';
    if (need === 'none') return;
    if (!request.auth) throw request.authError ?? new UnauthorizedError('Missing API token');
    if (need === 'master' && request.auth.kind !== 'master') throw new ForbiddenError();
    // Behind a trusted proxy request.ip is whatever X-Forwarded-For says: store only an address
    // (anything else, a NUL included, would fail the batched usage UPDATE of every token).
    deps.authenticator.recordUse(request.auth.tokenId, isIP(request.ip) ? request.ip : null);
  });
}
