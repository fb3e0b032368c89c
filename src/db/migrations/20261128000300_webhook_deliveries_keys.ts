import { sql, type Kysely } from 'kysely';

// Fewer index entries and no per-row key check a message (docs/benchmarks.md, "Webhooks: fan-out
// and delivery"):
// - The primary key is (endpoint_id, id) instead of (id), and the endpoint's log index
//   (endpoint_id, id DESC) goes: the key serves the log, newest first, read backwards. Every
//   lookup of a message names its endpoint. The fan-out's INSERT writes three index entries a
//   message instead of four, the outcome's UPDATE (not HOT: the due index changes) two instead
//   of three. id stays unique by its sequence; it is still the message's webhook-id.
// - No foreign key to webhook_endpoints: its check ran once a message (a trigger and a query
//   each). Its cascade is a statement trigger on webhook_endpoints instead (an account's deletion
//   still reaches the messages, through the endpoints' own cascade), and what inserts messages
//   takes its endpoints' rows FOR KEY SHARE first, as the key's check did, so an endpoint cannot
//   be deleted between (src/modules/webhooks/repo.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey,
      ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (endpoint_id, id);
    DROP INDEX webhook_deliveries_endpoint_idx;

    CREATE FUNCTION webhook_endpoints_delete_deliveries() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      DELETE FROM webhook_deliveries d USING gone_endpoints g WHERE d.endpoint_id = g.id;
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER webhook_endpoints_delete_deliveries AFTER DELETE ON webhook_endpoints
      REFERENCING OLD TABLE AS gone_endpoints
      FOR EACH STATEMENT EXECUTE FUNCTION webhook_endpoints_delete_deliveries();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER webhook_endpoints_delete_deliveries ON webhook_endpoints;
    DROP FUNCTION webhook_endpoints_delete_deliveries();
    CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC);
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey,
      ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
    DELETE FROM webhook_deliveries d WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.id = d.endpoint_id);
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
      FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE;
  `.execute(db);
}
