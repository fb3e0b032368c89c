import { sql, type RawBuilder } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';
import { executePrepared } from '../../db/prepared.ts';
import { isTokenActive } from '../tokens/authenticate.ts';

export type TransactionType = 'start' | 'deposit' | 'usage' | 'refund';

export const WELCOME_CREDITS = 100;

export async function createWallet(trx: DbOrTrx, accountId: string): Promise<void> {
  await trx
    .insertInto('wallets')
    .values({ account_id: accountId, balance: 0, total_purchased: 0 })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
}

export interface LedgerEntry {
  accountId: string;
  type: TransactionType;
  /** Credits: positive adds, negative takes. */
  amount: number;
  description: string;
  /** Idempotency key: a second entry with the same reference for the account changes nothing. */
  reference?: string;
  /** For deposits: also count towards total_purchased. */
  purchased?: boolean;
  /**
   * Applies the entry only if this token is still usable at `now` (not revoked, not expired): a
   * request that authenticated from a cache is charged, and so served, only by a live token.
   */
  ifTokenActive?: { tokenId: string; now: Date };
}

export type LedgerResult =
  | { applied: true; balanceAfter: number }
  | { applied: false; reason: 'insufficient'; balance: number }
  | { applied: false; reason: 'duplicate' }
  | { applied: false; reason: 'inactive-token' };

/**
 * One balance change and its append-only ledger row as the steps of a single statement (CTEs
 * `ledger_dup`, `ledger_upd`, `ledger_ins`; `ledger_ins` returns `balance_after`), so the two can
 * never disagree: the wallet row is updated only when the balance stays >= 0 (with a reference,
 * only when no entry with that reference exists yet; with `ifTokenActive`, only while the token is
 * usable; and only when `gate` holds), and the ledger row is inserted from the update's result.
 * Concurrent callers serialise on the wallet row. A caller can put the steps in a statement that
 * also reads what is being paid for (one round trip), then ask whyNotApplied when nothing was.
 */
export function ledgerEntrySteps(e: LedgerEntry, gate: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  const purchased = e.purchased ? e.amount : 0;
  const token = e.ifTokenActive;
  return sql`ledger_dup AS (
      SELECT 1 FROM wallet_transactions
       WHERE account_id = ${e.accountId} AND reference = ${e.reference ?? null}::text
    ), ledger_upd AS (
      UPDATE wallets
         SET balance = balance + ${e.amount}::bigint,
             total_purchased = total_purchased + ${purchased}::bigint,
             updated_at = now()
       WHERE account_id = ${e.accountId}
         AND balance + ${e.amount}::bigint >= 0
         AND NOT EXISTS (SELECT 1 FROM ledger_dup)
         AND (${token?.tokenId ?? null}::bigint IS NULL OR EXISTS (
               SELECT 1 FROM api_tokens WHERE id = ${token?.tokenId ?? null}::bigint AND revoked_at IS NULL
                  AND (expires_at IS NULL OR expires_at > ${token?.now ?? null}::timestamptz)))
         AND ${gate}
       RETURNING account_id, balance
    ), ledger_ins AS (
      INSERT INTO wallet_transactions (account_id, type, amount, balance_after, description, reference)
      SELECT account_id, ${e.type}, ${e.amount}::bigint, balance, ${e.description}, ${e.reference ?? null}::text FROM ledger_upd
      RETURNING balance_after
    )`;
}

/**
 * Applies one entry in one statement (ledgerEntrySteps). An entry with a reference, in a caller's
 * transaction, first locks the wallet row in a statement of its own: an entry with the same
 * reference that another open transaction holds is then waited for before the entry's statement
 * takes its snapshot, so `ledger_dup` sees it once committed (READ COMMITTED). Without that lock the
 * statement would only meet it in the unique index, and the 23505 aborts the whole transaction.
 */
export async function applyLedgerEntry(db: DbOrTrx, e: LedgerEntry): Promise<LedgerResult> {
  if (e.reference && db.isTransaction) {
    await db.selectFrom('wallets').select('account_id').where('account_id', '=', e.accountId).forUpdate().execute();
  }
  let res;
  try {
    res = await executePrepared(db, sql<{ balance_after: string }>`WITH ${ledgerEntrySteps(e)} SELECT balance_after FROM ledger_ins`);
  } catch (err) {
    // Two concurrent entries with one reference outside transactions: the unique index lets only
    // one in, and the failed statement took nothing.
    if ((err as { code?: string }).code === '23505' && e.reference && !db.isTransaction) return { applied: false, reason: 'duplicate' };
    throw err;
  }
  if (res.rows.length === 1) return { applied: true, balanceAfter: Number(res.rows[0].balance_after) };
  return whyNotApplied(db, e);
}

/** Why an entry whose statement applied nothing was refused (its gate aside). */
export async function whyNotApplied(db: DbOrTrx, e: LedgerEntry): Promise<Extract<LedgerResult, { applied: false }>> {
  if (e.reference) {
    const dup = await db
      .selectFrom('wallet_transactions')
      .select('id')
      .where('account_id', '=', e.accountId)
      .where('reference', '=', e.reference)
      .executeTakeFirst();
    if (dup) return { applied: false, reason: 'duplicate' };
  }
  const token = e.ifTokenActive;
  if (token && !(await isTokenActive(db, token.tokenId, token.now))) return { applied: false, reason: 'inactive-token' };
  const w = await db.selectFrom('wallets').select('balance').where('account_id', '=', e.accountId).executeTakeFirst();
  return { applied: false, reason: 'insufficient', balance: Number(w?.balance ?? 0) };
}
