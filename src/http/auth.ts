import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import type { Clock } from '../lib/clock.ts';
import { TOKEN_FORMAT, hashSecret } from '../lib/ids.ts';
import type { UsageTracker } from '../modules/tokens/usage.ts';
import { ForbiddenError, UnauthorizedError } from '../lib/errors.ts';

/** What a route needs: `master` (Master Token only), `any` (API or Master Token) or `none`. */
export type AuthNeed = 'master' | 'any' | 'none';

export interface AuthContext {
  accountId: string;
  userRef: string;
  userName: string;
  email: string;
  tokenId: string;
  tokenRef: string;
  tokenName: string;
  kind: 'master' | 'api';
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
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
export function installAuthResolution(app: FastifyInstance, deps: { db: Db; clock: Clock; usage: UsageTracker }): void {
  app.decorateRequest('auth', null);
  app.decorateRequest('authError', null);
  app.addHook('onRequest', async (request) => {
    if ((request.routeOptions.config?.auth ?? 'none') === 'none') return;
    const header = request.headers.authorization?.trim() ?? '';
    const m = /^Bearer(?:\s+(.*))?$/i.exec(header);
    const token = m?.[1]?.trim() ?? '';
    if (header === '' || (m && token === '')) {
      request.authError = new UnauthorizedError('Missing API token');
      return;
    }
    if (!m || !TOKEN_FORMAT.test(token)) {
      request.authError = new UnauthorizedError('Malformed token format');
      return;
    }
    const row = await deps.db
      .selectFrom('api_tokens as t')
      .innerJoin('accounts as a', 'a.id', 't.account_id')
      .select(['t.id', 't.token_ref', 't.name', 't.kind', 't.expires_at', 't.revoked_at', 't.last_used_at', 'a.id as account_id', 'a.user_ref', 'a.name as user_name', 'a.email'])
      .where('t.secret_hash', '=', hashSecret(token))
      .executeTakeFirst();
    const now = deps.clock.now();
    if (!row) request.authError = new UnauthorizedError('Invalid API token');
    else if (row.revoked_at) request.authError = new UnauthorizedError('Token revoked');
    else if (row.expires_at && row.expires_at <= now) request.authError = new UnauthorizedError('Token expired');
    else {
      request.auth = {
        accountId: row.account_id, userRef: row.user_ref, userName: row.user_name, email: row.email,
        tokenId: row.id, tokenRef: row.token_ref, tokenName: row.name, kind: row.kind,
        expiresAt: row.expires_at, lastUsedAt: row.last_used_at,
      };
    }
  });
}

/**
 * Runs at preParsing: after every onRequest hook (the rate limiter attaches its own per route),
 * before the body is read, so a request without a valid credential costs no parsing and a 401
 * comes before any 422.
 */
export function installAuthEnforcement(app: FastifyInstance, deps: { clock: Clock; usage: UsageTracker }): void {
  app.addHook('preParsing', async (request: FastifyRequest) => {
    const need = request.routeOptions.config?.auth ?? 'none';
    if (need === 'none') return;
    if (!request.auth) throw request.authError ?? new UnauthorizedError('Missing API token');
    if (need === 'master' && request.auth.kind !== 'master') throw new ForbiddenError();
    deps.usage.record(request.auth.tokenId, deps.clock.now(), request.ip);
  });
}
