import type { DbOrTrx, Db } from '../../db/database.ts';
import type { ApiTokensTable } from '../../db/schema.ts';
import type { Selectable } from 'kysely';
import type { Clock } from '../../lib/clock.ts';
import { hashSecret, newRef, newTokenSecret } from '../../lib/ids.ts';
import { NotFoundError, UnauthorizedError, ValidationError } from '../../lib/errors.ts';
import { isTokenActive } from './authenticate.ts';
import type { UsageTracker } from './usage.ts';

export type TokenRow = Selectable<ApiTokensTable>;

export const PLAINTEXT_WARNING = 'Store this token now: it is shown only once and cannot be retrieved again.';
const DAY_MS = 86_400_000;

export interface TokenView {
  token_ref: string;
  name: string;
  kind: 'master' | 'api';
  expires_at: string | null;
  is_active: boolean;
  revoked_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  usage_count: number;
  created_at: string;
}

export function toTokenView(t: TokenRow, now: Date): TokenView {
  return {
    token_ref: t.token_ref,
    name: t.name,
    kind: t.kind,
    expires_at: t.expires_at?.toISOString() ?? null,
    is_active: !t.revoked_at && (!t.expires_at || t.expires_at > now),
    revoked_at: t.revoked_at?.toISOString() ?? null,
    last_used_at: t.last_used_at?.toISOString() ?? null,
    last_used_ip: t.last_used_ip,
    usage_count: Number(t.usage_count),
    created_at: t.created_at.toISOString(),
  };
}

/** Creates a token row and returns it with its plaintext (shown once; only the hash is kept). */
export async function issueToken(
  trx: DbOrTrx,
  args: { accountId: string; kind: 'master' | 'api'; name: string; lifetimeDays: number | null; now: Date },
): Promise<{ row: TokenRow; plaintext: string }> {
  const plaintext = newTokenSecret(args.kind);
  const row = await trx
    .insertInto('api_tokens')
    .values({
      account_id: args.accountId,
      token_ref: newRef(),
      kind: args.kind,
      name: args.name,
      secret_hash: hashSecret(plaintext),
      lifetime_days: args.lifetimeDays,
      expires_at: args.lifetimeDays ? new Date(args.now.getTime() + args.lifetimeDays * DAY_MS) : null,
      created_at: args.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, plaintext };
}

/**
 * Every write of an account's tokens (issue, rotate, revoke, and the recovery that revokes them
 * all: src/modules/accounts/service.ts) locks the account's row first, so they run one after
 * another: a token issued or rotated while a recovery is confirmed is either in place before the
 * recovery revokes every token, or sees the recovery's work. FOR NO KEY UPDATE, so that rows
 * inserted elsewhere with a key to the account (ledger entries, watches) do not wait for it.
 */
export async function lockAccountTokens(trx: DbOrTrx, accountId: string): Promise<void> {
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forNoKeyUpdate().execute();
}

/** The request's own token, checked again under the account's lock: one revoked meanwhile (a recovery) writes nothing. */
async function lockForCaller(trx: DbOrTrx, caller: TokenCaller, now: Date): Promise<void> {
  await lockAccountTokens(trx, caller.accountId);
  if (!(await isTokenActive(trx, caller.tokenId, now))) throw new UnauthorizedError('Token revoked');
}

/** Who asks: the authenticated request's account and token (src/modules/tokens/authenticate.ts, Principal). */
export interface TokenCaller {
  accountId: string;
  tokenId: string;
}

export interface TokensDeps {
  db: Db;
  clock: Clock;
  usage: UsageTracker;
}

async function findOwnToken(db: DbOrTrx, accountId: string, tokenRef: string): Promise<TokenRow> {
  const row = await db
    .selectFrom('api_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('token_ref', '=', tokenRef)
    .executeTakeFirst();
  // Another account's token is indistinguishable from a missing one.
  if (!row) throw new NotFoundError('Token not found');
  return row;
}

export function createTokensService(deps: TokensDeps) {
  const { db, clock } = deps;
  return {
    async create(caller: TokenCaller, name: string, expiresInDays: number | undefined) {
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        await lockForCaller(trx, caller, now);
        const { row, plaintext } = await issueToken(trx, {
          accountId: caller.accountId,
          kind: 'api',
          name,
          lifetimeDays: expiresInDays ?? null,
          now,
        });
        return { ...toTokenView(row, now), plaintext, warning: PLAINTEXT_WARNING };
      });
    },

    async list(accountId: string) {
      await deps.usage.flush();
      const rows = await db
        .selectFrom('api_tokens')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      const now = clock.now();
      return rows.map((r) => toTokenView(r, now));
    },

    async get(accountId: string, tokenRef: string) {
      await deps.usage.flush();
      return toTokenView(await findOwnToken(db, accountId, tokenRef), clock.now());
    },

    async rename(accountId: string, tokenRef: string, name: string) {
      await findOwnToken(db, accountId, tokenRef);
      const row = await db
        .updateTable('api_tokens')
        .set({ name })
        .where('account_id', '=', accountId)
        .where('token_ref', '=', tokenRef)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toTokenView(row, clock.now());
    },

    async revoke(caller: TokenCaller, tokenRef: string) {
      const { accountId } = caller;
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        await lockForCaller(trx, caller, now);
        const row = await findOwnToken(trx, accountId, tokenRef);
        if (row.kind === 'master') {
          throw new ValidationError({
            token_ref: ['The Master Token cannot be revoked; rotate it, or recover the account to replace it.'],
          });
        }
        if (row.revoked_at) return { token_ref: row.token_ref, revoked_at: row.revoked_at.toISOString() };
        const updated = await trx
          .updateTable('api_tokens')
          .set({ revoked_at: now })
          .where('id', '=', row.id)
          .where('revoked_at', 'is', null)
          .returning(['token_ref', 'revoked_at'])
          .executeTakeFirstOrThrow();
        return { token_ref: row.token_ref, revoked_at: updated.revoked_at!.toISOString() };
      });
    },

    async rotate(caller: TokenCaller, tokenRef: string) {
      const { accountId } = caller;
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        await lockForCaller(trx, caller, now);
        const old = await trx
          .updateTable('api_tokens')
          .set({ revoked_at: now })
          .where('account_id', '=', accountId)
          .where('token_ref', '=', tokenRef)
          .where('revoked_at', 'is', null)
          // Only an active token: rotating an expired one would renew what its expiry ended.
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
          .returningAll()
          .executeTakeFirst();
        if (!old) {
          const existing = await findOwnToken(trx, accountId, tokenRef); // 404 when not ours
          throw new ValidationError({
            token_ref: [
              existing.revoked_at
                ? 'A revoked token cannot be rotated.'
                : existing.expires_at && existing.expires_at <= now
                  ? 'An expired token cannot be rotated; create a new one.'
                  : 'The token could not be rotated.',
            ],
          });
        }
        // The suffix is kept whole: a long name gives way to it (in characters, as names are counted).
        const suffix = ' (rotated)';
        const rotatedName = [...old.name].slice(0, 255 - suffix.length).join('') + suffix;
        const { row, plaintext } = await issueToken(trx, {
          accountId,
          kind: old.kind,
          name: rotatedName,
          lifetimeDays: old.lifetime_days,
          now,
        });
        return {
          old_token: { token_ref: old.token_ref, name: old.name, revoked_at: now.toISOString(), is_active: false as const },
          new_token: { ...toTokenView(row, now), plaintext, warning: PLAINTEXT_WARNING },
        };
      });
    },
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
