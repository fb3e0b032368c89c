import { sql, type Kysely } from 'kysely';

// Migrations never import app code: they describe the schema as it was on their day.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- When a payment reached its final state (confirmed, failed or expired); null while pending.
    ALTER TABLE payments ADD COLUMN completed_at timestamptz;
    UPDATE payments SET completed_at = updated_at WHERE status <> 'pending';
    ALTER TABLE payments ADD CONSTRAINT payments_completed_at_check CHECK ((status = 'pending') = (completed_at IS NULL));

    -- The ledger is append-only: a row is never changed, and removed only together with its
    -- wallet (an account's deletion cascades). Corrections are new rows.
    CREATE FUNCTION wallet_transactions_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION 'wallet_transactions is append-only: rows cannot be updated' USING ERRCODE = 'restrict_violation';
      END IF;
      IF EXISTS (SELECT 1 FROM wallets WHERE account_id = OLD.account_id) THEN
        RAISE EXCEPTION 'wallet_transactions is append-only: rows are removed only with their wallet' USING ERRCODE = 'restrict_violation';
      END IF;
      RETURN OLD;
    END
    $fn$;
    CREATE TRIGGER wallet_transactions_append_only
      BEFORE UPDATE OR DELETE ON wallet_transactions
      FOR EACH ROW EXECUTE FUNCTION wallet_transactions_append_only();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER wallet_transactions_append_only ON wallet_transactions;
    DROP FUNCTION wallet_transactions_append_only();
    ALTER TABLE payments DROP CONSTRAINT payments_completed_at_check;
    ALTER TABLE payments DROP COLUMN completed_at;
  `.execute(db);
}
