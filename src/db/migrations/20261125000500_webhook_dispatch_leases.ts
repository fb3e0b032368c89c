import { sql, type Kysely } from 'kysely';

// Webhook delivery by endpoint leases (docs/webhooks.md, "Durability and concurrency"): a
// dispatcher run takes whole endpoints for a lease and reads their due messages in bulk, instead
// of leasing each message with an UPDATE. A message is then written twice in its life (the
// fan-out's INSERT, the outcome's UPDATE) rather than three times, and the claim is one index
// probe per endpoint instead of a window over every due message.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The dispatcher run that owns the endpoint's sending until lease_until (a dead one's lapses).
    ALTER TABLE webhook_endpoints ADD COLUMN lease_owner text, ADD COLUMN lease_until timestamptz;
    DROP INDEX webhook_deliveries_due_idx;
    DROP INDEX webhook_deliveries_in_flight_idx;
    ALTER TABLE webhook_deliveries DROP COLUMN locked_until;
    -- An endpoint's pending messages in the order they fall due: the claim reads the head of it.
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX webhook_deliveries_due_idx;
    ALTER TABLE webhook_deliveries ADD COLUMN locked_until timestamptz;
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_in_flight_idx ON webhook_deliveries (endpoint_id) WHERE locked_until IS NOT NULL;
    ALTER TABLE webhook_endpoints DROP COLUMN lease_owner, DROP COLUMN lease_until;
  `.execute(db);
}
