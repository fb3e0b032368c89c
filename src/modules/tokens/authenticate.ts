import type { Db } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { UnauthorizedError } from '../../lib/errors.ts';
import { hashSecret, TOKEN_FORMAT } from '../../lib/ids.ts';
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

export type Authentication = { ok: true; principal: Principal } | { ok: false; error: UnauthorizedError };

/**
 * Turns a presented secret into a principal, or the 401 reason (docs/authentication.md). Only the
 * secret's hash is looked up, so no comparison of secrets can leak timing.
 */
export function createAuthenticator(deps: { db: Db; clock: Clock; usage: UsageTracker }) {
  return {
    async authenticate(secret: string): Promise<Authentication> {
      if (!TOKEN_FORMAT.test(secret)) return { ok: false, error: new UnauthorizedError('Malformed token format') };
      const row = await deps.db
        .selectFrom('api_tokens as t')
        .innerJoin('accounts as a', 'a.id', 't.account_id')
        .select(['t.id', 't.token_ref', 't.name', 't.kind', 't.expires_at', 't.revoked_at', 't.last_used_at', 'a.id as account_id', 'a.user_ref', 'a.name as user_name', 'a.email'])
        .where('t.secret_hash', '=', hashSecret(secret))
        .executeTakeFirst();
      if (!row) return { ok: false, error: new UnauthorizedError('Invalid API token') };
      if (row.revoked_at) return { ok: false, error: new UnauthorizedError('Token revoked') };
      if (row.expires_at && row.expires_at <= deps.clock.now()) return { ok: false, error: new UnauthorizedError('Token expired') };
      return {
        ok: true,
        principal: {
          accountId: row.account_id, userRef: row.user_ref, userName: row.user_name, email: row.email,
          tokenId: row.id, tokenRef: row.token_ref, tokenName: row.name, kind: row.kind,
          expiresAt: row.expires_at, lastUsedAt: row.last_used_at,
        },
      };
    },
    /** Counts a use of the token (written in batches: src/modules/tokens/usage.ts). */
    recordUse(tokenId: string, ip: string | null): void {
      deps.usage.record(tokenId, deps.clock.now(), ip);
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
