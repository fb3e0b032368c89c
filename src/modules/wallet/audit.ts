import { sql } from 'kysely';
import type { DbOrTrx } from '../../db/database.ts';

export interface AuditFinding {
  userRef: string | null;
  accountId: string;
  problem: string;
}

/**
 * Checks the ledger against the wallets, for every account:
 * - the balance equals the sum of the ledger's amounts, and total_purchased the sum of deposits;
 * - each row's balance_after is the previous row's plus its amount (the chain starts at 0) and
 *   the last one is the balance;
 * - every confirmed payment has exactly one deposit (`payment:<ref>`) of its credits, and no
 *   deposit names a payment that is not confirmed.
 * Read-only. Pass a REPEATABLE READ transaction so that every query sees one snapshot and
 * concurrent activity can never show up as a mismatch.
 */
export async function auditWallets(db: DbOrTrx): Promise<{ wallets: number; transactions: number; findings: AuditFinding[] }> {
  const findings: AuditFinding[] = [];

  const sums = await sql<{
    account_id: string;
    user_ref: string | null;
    balance: string;
    total_purchased: string;
    ledger_sum: string;
    deposits: string;
    last_after: string | null;
  }>`
    SELECT w.account_id, a.user_ref, w.balance, w.total_purchased,
           COALESCE(SUM(t.amount), 0) AS ledger_sum,
           COALESCE(SUM(t.amount) FILTER (WHERE t.type = 'deposit'), 0) AS deposits,
           (SELECT t2.balance_after FROM wallet_transactions t2 WHERE t2.account_id = w.account_id ORDER BY t2.id DESC LIMIT 1) AS last_after
      FROM wallets w
      LEFT JOIN accounts a ON a.id = w.account_id
      LEFT JOIN wallet_transactions t ON t.account_id = w.account_id
     GROUP BY w.account_id, a.user_ref, w.balance, w.total_purchased
     ORDER BY w.account_id`.execute(db);
  for (const r of sums.rows) {
    const at = { userRef: r.user_ref, accountId: r.account_id };
    if (r.balance !== r.ledger_sum) findings.push({ ...at, problem: `balance ${r.balance} but the ledger sums to ${r.ledger_sum}` });
    if (r.total_purchased !== r.deposits)
      findings.push({ ...at, problem: `total_purchased ${r.total_purchased} but deposits sum to ${r.deposits}` });
    if ((r.last_after ?? '0') !== r.balance)
      findings.push({ ...at, problem: `balance ${r.balance} but the last balance_after is ${r.last_after ?? 'absent (no rows)'}` });
  }

  const chain = await sql<{
    account_id: string;
    user_ref: string | null;
    id: string;
    amount: string;
    balance_after: string;
    previous: string;
  }>`
    SELECT c.account_id, a.user_ref, c.id, c.amount, c.balance_after, c.previous
      FROM (SELECT t.account_id, t.id, t.amount, t.balance_after,
                   LAG(t.balance_after, 1, 0::bigint) OVER (PARTITION BY t.account_id ORDER BY t.id) AS previous
              FROM wallet_transactions t) c
      LEFT JOIN accounts a ON a.id = c.account_id
     WHERE c.previous + c.amount <> c.balance_after
     ORDER BY c.account_id, c.id
     LIMIT 1000`.execute(db);
  for (const r of chain.rows) {
    findings.push({
      userRef: r.user_ref,
      accountId: r.account_id,
      problem: `transaction ${r.id}: balance_after ${r.balance_after} but the previous ${r.previous} plus amount ${r.amount} is ${BigInt(r.previous) + BigInt(r.amount)}`,
    });
  }

  const payments = await sql<{
    account_id: string;
    user_ref: string | null;
    payment_ref: string | null;
    reference: string | null;
    status: string | null;
    credits: number | null;
    deposits: number;
    deposited: string | null;
  }>`
    SELECT COALESCE(p.account_id, d.account_id) AS account_id, a.user_ref, p.payment_ref, d.reference, p.status, p.credits,
           COUNT(d.id)::int AS deposits, SUM(d.amount) AS deposited
      FROM (SELECT * FROM payments WHERE status = 'confirmed') p
      FULL JOIN (SELECT * FROM wallet_transactions WHERE type = 'deposit') d
        ON d.account_id = p.account_id AND d.reference = 'payment:' || p.payment_ref
      LEFT JOIN accounts a ON a.id = COALESCE(p.account_id, d.account_id)
     GROUP BY 1, 2, 3, 4, 5, 6
    HAVING p.payment_ref IS NULL OR COUNT(d.id) <> 1 OR SUM(d.amount) <> MAX(p.credits)
     LIMIT 1000`.execute(db);
  for (const r of payments.rows) {
    const at = { userRef: r.user_ref, accountId: r.account_id };
    if (!r.payment_ref) findings.push({ ...at, problem: `deposit ${r.reference ?? '(no reference)'} belongs to no confirmed payment` });
    else if (r.deposits !== 1)
      findings.push({ ...at, problem: `confirmed payment ${r.payment_ref} has ${r.deposits} deposits (expected 1)` });
    else findings.push({ ...at, problem: `confirmed payment ${r.payment_ref} of ${r.credits} credits was deposited as ${r.deposited}` });
  }

  const totals = await sql<{ wallets: number; transactions: number }>`
    SELECT (SELECT COUNT(*) FROM wallets)::int AS wallets, (SELECT COUNT(*) FROM wallet_transactions)::int AS transactions`.execute(db);
  return { wallets: totals.rows[0].wallets, transactions: totals.rows[0].transactions, findings };
}
