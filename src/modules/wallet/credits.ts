import type { RawBuilder } from 'kysely';
import type { PriceKey } from '../../config.ts';
import type { DbOrTrx } from '../../db/database.ts';
import { InsufficientCreditsError, UnauthorizedError } from '../../lib/errors.ts';
import { applyLedgerEntry, ledgerEntrySteps, whyNotApplied, type LedgerEntry, type LedgerResult } from './ledger.ts';
import type { BatchUsage, UsageBatchRow } from './ledger-batch.ts';

/**
 * The credit API every priced operation uses, whoever calls it: a route (through the pricing hook
 * in src/http/pricing.ts), a service with side effects (in its own transaction), a job, or the MCP
 * server. Prices and the guarantees (charged once, only on success, never below zero) are in docs/credits.md.
 */

export type PriceTable = Readonly<Record<PriceKey, number>>;

/** Credits an operation costs for `units` units. */
export function priceOf(prices: PriceTable, operation: PriceKey, units = 1): number {
  if (!Number.isInteger(units) || units < 0) throw new RangeError(`units must be a non-negative integer (got ${units})`);
  return prices[operation] * units;
}

export async function readBalance(db: DbOrTrx, accountId: string): Promise<number> {
  const w = await db.selectFrom('wallets').select('balance').where('account_id', '=', accountId).executeTakeFirst();
  return Number(w?.balance ?? 0);
}

export interface ChargeArgs {
  accountId: string;
  operation: PriceKey;
  /** The charge is price × units (e.g. identifiers newly queued); default 1. */
  units?: number;
  prices: PriceTable;
  /** Idempotency key: a second charge with the same reference for the account takes nothing. */
  reference?: string;
  /** Charge only while this token is usable (see LedgerEntry.ifTokenActive). */
  ifTokenActive?: { tokenId: string; now: Date };
}

export interface ChargeResult {
  /** Credits taken by this call (0 when free or already charged under the reference). */
  charged: number;
  /** Balance after the charge; null when nothing was written. */
  balanceAfter: number | null;
}

/** What an attempt to charge came to: taken, or refused for too few credits (nothing written). */
export type ChargeAttempt =
  | { taken: true; charged: number; balanceAfter: number | null }
  | { taken: false; reason: 'insufficient'; balance: number; required: number }
  | { taken: false; reason: 'inactive-token' };

/** The ledger entry of a usage charge; null when the operation is free. */
function usageEntry(args: ChargeArgs): LedgerEntry | null {
  const amount = priceOf(args.prices, args.operation, args.units ?? 1);
  if (amount === 0) return null;
  return {
    accountId: args.accountId,
    type: 'usage',
    amount: -amount,
    description: args.operation,
    reference: args.reference,
    ifTokenActive: args.ifTokenActive,
  };
}

function attemptOf(r: LedgerResult, amount: number): ChargeAttempt {
  if (r.applied) return { taken: true, charged: amount, balanceAfter: r.balanceAfter };
  if (r.reason === 'duplicate') return { taken: true, charged: 0, balanceAfter: null };
  if (r.reason === 'inactive-token') return { taken: false, reason: 'inactive-token' };
  return { taken: false, reason: 'insufficient', balance: r.balance, required: amount };
}

/**
 * Like chargeCredits, but a short balance is an answer, not an error: for callers that have already
 * done the work and must decide what to answer (the pricing hook of src/http/pricing.ts).
 */
export async function tryChargeCredits(db: DbOrTrx, args: ChargeArgs): Promise<ChargeAttempt> {
  const entry = usageEntry(args);
  if (!entry) return { taken: true, charged: 0, balanceAfter: null };
  return attemptOf(await applyLedgerEntry(db, entry), -entry.amount);
}

/**
 * A charge made by the very statement that reads what is paid for, so a priced read is one round
 * trip: put `WITH <the read> AS (...), ${steps}` first, take it only if `gate` holds (say, the
 * read found something), and select `(SELECT balance_after FROM ledger_ins)`. chargeOutcome then
 * turns that value into the attempt (reading more only when nothing was taken). Null when free.
 */
export function chargeSteps(args: ChargeArgs, gate: RawBuilder<unknown>): RawBuilder<unknown> | null {
  const entry = usageEntry(args);
  return entry ? ledgerEntrySteps(entry, gate) : null;
}

export async function chargeOutcome(db: DbOrTrx, args: ChargeArgs, balanceAfter: string | number | null): Promise<ChargeAttempt> {
  const entry = usageEntry(args);
  if (!entry) return { taken: true, charged: 0, balanceAfter: null };
  const r = balanceAfter === null ? await whyNotApplied(db, entry) : { applied: true as const, balanceAfter: Number(balanceAfter) };
  return attemptOf(r, -entry.amount);
}

/**
 * The charge as one of a batch taken in one statement (ledger-batch.ts usageBatchSteps, for
 * requests charged concurrently); null when free. Only for charges that re-check a token and
 * carry no idempotency reference.
 */
export function batchUsageOf(args: ChargeArgs): BatchUsage | null {
  if (args.reference !== undefined || !args.ifTokenActive) throw new Error('a batched charge re-checks its token and has no reference');
  const entry = usageEntry(args);
  if (!entry) return null;
  return {
    accountId: args.accountId,
    amount: -entry.amount,
    description: entry.description,
    tokenId: args.ifTokenActive.tokenId,
    at: args.ifTokenActive.now,
  };
}

/** What a batched charge (batchUsageOf) came to, from its outcome columns (usageBatchOutcome). */
export function batchAttemptOf(row: UsageBatchRow, usage: BatchUsage): ChargeAttempt {
  if (row.bc_balance_after !== null) return { taken: true, charged: usage.amount, balanceAfter: Number(row.bc_balance_after) };
  if (!row.bc_token_live) return { taken: false, reason: 'inactive-token' };
  return { taken: false, reason: 'insufficient', balance: Number(row.bc_balance_left ?? 0), required: usage.amount };
}

/**
 * Takes the price of an operation as one `usage` ledger row, atomically with the balance check
 * (the wallet row update only applies when the balance stays >= 0). Pass the operation's own
 * transaction so that the charge commits or rolls back with its side effects.
 * Throws InsufficientCreditsError (402) when the balance is short: let it roll the transaction back.
 */
export async function chargeCredits(trx: DbOrTrx, args: ChargeArgs): Promise<ChargeResult> {
  const r = await tryChargeCredits(trx, args);
  if (!r.taken && r.reason === 'inactive-token') throw new UnauthorizedError('Token revoked');
  if (!r.taken) throw new InsufficientCreditsError(r.balance, r.required);
  return { charged: r.charged, balanceAfter: r.balanceAfter };
}

export interface RefundArgs {
  accountId: string;
  operation: PriceKey;
  /**
   * Credits to give back: what the operation was charged for what is refunded (say, the credits a
   * charge took), not its price now, which may have changed since the charge.
   */
  credits: number;
  /** Required: a retried job must never refund twice. */
  reference: string;
  /** Defaults to `<operation> refund`. */
  description?: string;
}

/** Gives back credits of a charged operation as one `refund` ledger row (idempotent by reference). */
export async function refundCredits(trx: DbOrTrx, args: RefundArgs): Promise<{ refunded: number }> {
  const amount = args.credits;
  if (!Number.isInteger(amount) || amount < 0) throw new RangeError(`credits must be a non-negative integer (got ${amount})`);
  if (amount === 0) return { refunded: 0 };
  const r = await applyLedgerEntry(trx, {
    accountId: args.accountId,
    type: 'refund',
    amount,
    description: args.description ?? `${args.operation} refund`,
    reference: args.reference,
  });
  if (r.applied) return { refunded: amount };
  if (r.reason === 'duplicate') return { refunded: 0 };
  // A positive entry fails only when the wallet does not exist.
  throw new Error(`refund for account ${args.accountId} could not be applied: no wallet`);
}
