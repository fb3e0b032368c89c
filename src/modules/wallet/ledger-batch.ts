import { sql, type RawBuilder } from 'kysely';

/**
 * Several usage charges, of several requests and accounts, in one statement (one round trip, one
 * commit for a batch: src/modules/companies/repo.ts findCompaniesCharging). The guarantees are
 * those of ledgerEntrySteps, per charge:
 * - each charge is taken at most once: one ledger row per charge taken, none otherwise, in the
 *   statement that updates the wallet by the sum of the charges taken (so the ledger sums to the
 *   balance);
 * - never below zero: the wallet rows are locked first (SELECT ... FOR UPDATE, in account order,
 *   so concurrent batches cannot deadlock each other), which hands the newest balance over; an
 *   account's charges are taken in batch order while their running sum fits in that balance (a
 *   prefix: the first charges that fit, the rest refused as insufficient), and each ledger row
 *   carries the balance after it, in the order of its id;
 * - a charge is taken only while its token is usable (not revoked, not expired at its `at`) and
 *   only when its gate holds (say, the company paid for was found).
 * Charges with an idempotency reference are not batched (applyLedgerEntry handles those).
 */
export interface BatchUsage {
  accountId: string;
  /** Credits to take (> 0). */
  amount: number;
  description: string;
  /** Take it only while this token is usable at `at`. */
  tokenId: string;
  at: Date;
}

/**
 * The steps (CTEs `bc_req` ... `bc_ins`) of a statement that takes `charges`; charge number i
 * (1-based, batch order) is attempted only when `gate(i)` holds. Select the outcome of each with
 * usageBatchOutcome.
 */
export function usageBatchSteps(
  charges: readonly BatchUsage[],
  gate: (i: RawBuilder<unknown>) => RawBuilder<unknown>,
): RawBuilder<unknown> {
  for (const c of charges)
    if (!(Number.isInteger(c.amount) && c.amount > 0)) throw new RangeError(`amount must be a positive integer (got ${c.amount})`);
  return sql`bc_req AS (
      SELECT * FROM unnest(${charges.map((c) => c.accountId)}::bigint[], ${charges.map((c) => c.tokenId)}::bigint[],
                           ${charges.map((c) => c.amount)}::bigint[], ${charges.map((c) => c.at)}::timestamptz[],
                           ${charges.map((c) => c.description)}::text[])
        WITH ORDINALITY AS q(account_id, token_id, amount, at, description, i)
    ), bc_live AS (
      SELECT q.* FROM bc_req q
       WHERE EXISTS (SELECT 1 FROM api_tokens t WHERE t.id = q.token_id AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > q.at))
    ), bc_lock AS (
      SELECT w.account_id, w.balance FROM wallets w
       WHERE w.account_id IN (SELECT q.account_id FROM bc_live q WHERE ${gate(sql`q.i`)})
       ORDER BY w.account_id FOR UPDATE
    ), bc_run AS (
      SELECT q.i, q.account_id, q.amount, q.description, l.balance,
             sum(q.amount) OVER (PARTITION BY q.account_id ORDER BY q.i) AS running
        FROM bc_live q JOIN bc_lock l ON l.account_id = q.account_id
       WHERE ${gate(sql`q.i`)}
    ), bc_take AS (
      SELECT i, account_id, amount, description, balance - running AS balance_after FROM bc_run WHERE running <= balance
    ), bc_acct AS (
      SELECT account_id, min(balance) - coalesce(max(running) FILTER (WHERE running <= balance), 0) AS balance_left
        FROM bc_run GROUP BY account_id
    ), bc_upd AS (
      UPDATE wallets w SET balance = w.balance - s.total, updated_at = now()
        FROM (SELECT account_id, sum(amount) AS total FROM bc_take GROUP BY account_id) s
       WHERE w.account_id = s.account_id
      RETURNING w.account_id
    ), bc_ins AS (
      INSERT INTO wallet_transactions (account_id, type, amount, balance_after, description)
      SELECT account_id, 'usage', -amount, balance_after, description FROM bc_take
       WHERE account_id IN (SELECT account_id FROM bc_upd)
       ORDER BY account_id, i
      RETURNING 1
    )`;
}

/**
 * The outcome columns of charge `i` (and its `account_id`): `bc_balance_after` (set when taken),
 * `bc_token_live`, and `bc_balance_left` (the account's balance after the batch: what a refused
 * charge found; null when the account has no wallet or no charge of it passed its gate).
 */
export function usageBatchOutcome(i: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT t.balance_after FROM bc_take t WHERE t.i = ${i}) AS bc_balance_after,
    EXISTS (SELECT 1 FROM bc_live q WHERE q.i = ${i}) AS bc_token_live,
    (SELECT a.balance_left FROM bc_req q JOIN bc_acct a ON a.account_id = q.account_id WHERE q.i = ${i}) AS bc_balance_left`;
}

export interface UsageBatchRow {
  bc_balance_after: string | null;
  bc_token_live: boolean;
  bc_balance_left: string | null;
}
