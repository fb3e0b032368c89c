import type { Db, DbOrTrx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { UnauthorizedError } from '../../lib/errors.ts';
import { hashSecret, TOKEN_FORMAT } from '../../lib/ids.ts';
import type { TokenCache } from './token-cache.ts';
import type { UsageTracker } from './usage.ts';

/** Who a request acts as: the account and the token it presented. */
export interface Principal {
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

/** `cached`: the principal came from this process's token cache, not from the database just now. */
export type Authentication = { ok: true; principal: Principal; cached: boolean } | { ok: false; error: UnauthorizedError };

/**
 * Turns a presented secret into a principal, or the 401 reason (docs/authentication.md). Only the
 * secret's hash is looked up, so no comparison of secrets can leak timing. With `useCache`, a
 * principal this process holds (src/modules/tokens/token-cache.ts) answers without a round trip:
 * only for callers that re-check the token when they act (the charge of a priced route).
 */
export function createAuthenticator(deps: { db: Db; clock: Clock; usage: UsageTracker; cache: TokenCache }) {
  return {
    async authenticate(secret: string, options: { useCache?: boolean } = {}): Promise<Authentication> {
      if (!TOKEN_FORMAT.test(secret)) return { ok: false, error: new UnauthorizedError('Malformed token format') };
      const hash = hashSecret(secret);
      const now = deps.clock.now();
      if (options.useCache) {
        const principal = deps.cache.get(hash, now);
        if (principal) return { ok: true, principal, cached: true };
      }
      const ticket = deps.cache.ticket();
      const row = await deps.db
        .selectFrom('api_tokens as t')
        .innerJoin('accounts as a', 'a.id', 't.account_id')
        .select([
          't.id',
          't.token_ref',
          't.name',
          't.kind',
          't.expires_at',
          't.revoked_at',
          't.last_used_at',
          'a.id as account_id',
          'a.user_ref',
          'a.name as user_name',
          'a.email',
        ])
        .where('t.secret_hash', '=', hash)
        .executeTakeFirst();
      if (!row) return { ok: false, error: new UnauthorizedError('Invalid API token') };
      if (row.revoked_at) return { ok: false, error: new UnauthorizedError('Token revoked') };
      if (row.expires_at && row.expires_at <= now) return { ok: false, error: new UnauthorizedError('Token expired') };
      const principal: Principal = {
        accountId: row.account_id,
        userRef: row.user_ref,
        userName: row.user_name,
        email: row.email,
        tokenId: row.id,
        tokenRef: row.token_ref,
        tokenName: row.name,
        kind: row.kind,
        expiresAt: row.expires_at,
        lastUsedAt: row.last_used_at,
      };
      deps.cache.put(ticket, hash, principal);
      return { ok: true, principal, cached: false };
    },
    /** Counts a use of the token (written in batches: src/modules/tokens/usage.ts). */
    recordUse(tokenId: string, ip: string | null): void {
      deps.usage.record(tokenId, deps.clock.now(), ip);
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

/** Whether a token is still usable at `now`: neither revoked nor expired (nor gone). */
export async function isTokenActive(db: DbOrTrx, tokenId: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('api_tokens')
    .select('id')
    .where('id', '=', tokenId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row !== undefined;
}
