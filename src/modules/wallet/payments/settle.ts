import type { Db } from '../../../db/database.ts';
import type { PaymentsTable } from '../../../db/schema.ts';
import type { Selectable } from 'kysely';
import { applyLedgerEntry } from '../ledger.ts';

export type PaymentRow = Selectable<PaymentsTable>;
export type PaymentStatus = PaymentRow['status'];

export type SettleOutcome =
  /** This call moved the payment to the state asked for (for a confirmation: credited now). */
  | { changed: true; payment: PaymentRow }
  /** Nothing changed: the payment was already final (or, for the dev checkout, past its expiry). */
  | { changed: false; payment: PaymentRow }
  | { changed: false; payment: null };

export interface SettleTarget {
  paymentRef: string;
  provider: PaymentRow['provider'];
  /** When given, the payment must belong to this provider checkout (webhooks). */
  sessionId?: string;
  now: Date;
  /** The dev checkout cannot be paid after its expiry; a provider's word that money arrived always counts. */
  onlyBeforeExpiry?: boolean;
}

export const depositReference = (paymentRef: string) => `payment:${paymentRef}`;

async function findPayment(db: Db, t: SettleTarget): Promise<PaymentRow | null> {
  let q = db.selectFrom('payments').selectAll().where('payment_ref', '=', t.paymentRef).where('provider', '=', t.provider);
  if (t.sessionId) q = q.where((eb) => eb.or([eb('provider_session_id', '=', t.sessionId!), eb('provider_session_id', 'is', null)]));
  return (await q.executeTakeFirst()) ?? null;
}

/**
 * Confirms a pending payment and credits its wallet, in one transaction. The conditional update
 * (`status = 'pending'`) lets exactly one of any number of concurrent or repeated notifications
 * through: the others wait on the row lock, then find it confirmed and change nothing. The deposit
 * carries the reference `payment:<ref>`, whose unique index is a second guard.
 */
export async function confirmPayment(db: Db, t: SettleTarget): Promise<SettleOutcome> {
  const confirmed = await db.transaction().execute(async (trx) => {
    let q = trx
      .updateTable('payments')
      .set({ status: 'confirmed', completed_at: t.now, updated_at: t.now })
      .where('payment_ref', '=', t.paymentRef)
      .where('provider', '=', t.provider)
      .where('status', '=', 'pending');
    if (t.sessionId) q = q.where((eb) => eb.or([eb('provider_session_id', '=', t.sessionId!), eb('provider_session_id', 'is', null)]));
    if (t.onlyBeforeExpiry) q = q.where('expires_at', '>', t.now);
    const payment = await q.returningAll().executeTakeFirst();
    if (!payment) return null;
    const entry = await applyLedgerEntry(trx, {
      accountId: payment.account_id,
      type: 'deposit',
      amount: payment.credits,
      description: `Top-up ${payment.package_slug} (payment ${payment.payment_ref})`,
      reference: depositReference(payment.payment_ref),
      purchased: true,
    });
    // A deposit already recorded for a payment that was pending means the two disagree: refuse
    // (the transaction rolls back) rather than hide it; `regwatch wallet audit` reports such rows.
    if (!entry.applied) throw new Error(`payment ${payment.payment_ref}: deposit not applied (${entry.reason})`);
    return payment;
  });
  if (confirmed) return { changed: true, payment: confirmed };
  const payment = await findPayment(db, t);
  return payment ? { changed: false, payment } : { changed: false, payment: null };
}

/** Moves a pending payment to `failed` or `expired`; a final payment is left as it is. */
export async function closePayment(db: Db, t: SettleTarget & { status: 'failed' | 'expired' }): Promise<SettleOutcome> {
  let q = db
    .updateTable('payments')
    .set({ status: t.status, completed_at: t.now, updated_at: t.now })
    .where('payment_ref', '=', t.paymentRef)
    .where('provider', '=', t.provider)
    .where('status', '=', 'pending');
  if (t.sessionId) q = q.where((eb) => eb.or([eb('provider_session_id', '=', t.sessionId!), eb('provider_session_id', 'is', null)]));
  const payment = await q.returningAll().executeTakeFirst();
  if (payment) return { changed: true, payment };
  const current = await findPayment(db, t);
  return current ? { changed: false, payment: current } : { changed: false, payment: null };
}
