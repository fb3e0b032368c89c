import { sql, type Kysely } from 'kysely';

// A message row no longer has a foreign key to accounts, nor the index on account_id that served
// only that key's ON DELETE CASCADE: a message belongs to an endpoint (whose key cascades), and
// the endpoint to the account (whose key cascades), so deleting an account still deletes its
// messages, through its endpoints. The fan-out's INSERT then checks one key a row instead of two
// and writes four index entries instead of five, and the outcome's UPDATE (not HOT: status and
// next_attempt_at are in the due index) writes three new index entries instead of four
// (docs/benchmarks.md, "Webhooks: fan-out and delivery"). account_id stays (the row's tenancy).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_account_id_fkey;
    DROP INDEX webhook_deliveries_account_idx;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX webhook_deliveries_account_idx ON webhook_deliveries (account_id);
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_account_id_fkey
      FOREIGN KEY (account_id) REFERENCES accounts(id) ON DELETE CASCADE;
  `.execute(db);
}
