import { applyLedgerEntry } from '../../src/modules/wallet/ledger.ts';
import { createAccount, type TestApp } from './app.ts';

/** A new account holding `balance` credits (its welcome credits adjusted through the ledger): its id, master token and that token's id. */
export async function accountWithBalance(t: TestApp, balance: number): Promise<{ id: string; tokenId: string; master: string }> {
  const a = await createAccount(t);
  const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', a.userRef).executeTakeFirstOrThrow();
  const token = await t.db.db.selectFrom('api_tokens').select('id').where('account_id', '=', id).executeTakeFirstOrThrow();
  const change = balance - 100; // the welcome credits
  if (change !== 0)
    await applyLedgerEntry(t.db.db, { accountId: id, type: change > 0 ? 'deposit' : 'usage', amount: change, description: 'test' });
  return { id, tokenId: token.id, master: a.master };
}

/** The account's wallet balance. */
export async function balanceOf(t: TestApp, accountId: string): Promise<number> {
  return Number(
    (await t.db.db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirstOrThrow()).balance,
  );
}
