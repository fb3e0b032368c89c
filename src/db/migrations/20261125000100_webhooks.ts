import { sql, type Kysely } from 'kysely';

// Webhooks (docs/webhooks.md): endpoints, their signing secrets, and one delivery row per
// (endpoint, message) with its attempts. Messages are queued by a statement trigger on events:
// the fan-out job is added in the very transaction that commits the events, so a process that
// dies between the commit and the fan-out loses nothing (the job is in the same commit).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id bigserial PRIMARY KEY,
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      url text NOT NULL CHECK (length(url) <= 2048),
      description text CHECK (length(description) <= 500),
      -- Empty: every type.
      event_types event_type[] NOT NULL DEFAULT '{}',
      status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
      disabled_reason text,
      -- The first failed attempt since the last delivered one: the 5-day disabling counts from it.
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, id);
    -- The fan-out's probe: the accounts with an enabled endpoint.
    CREATE INDEX webhook_endpoints_enabled_idx ON webhook_endpoints (account_id) WHERE status = 'enabled';

    -- The current secret has expires_at NULL; a rotated-out one keeps signing until expires_at.
    CREATE TABLE webhook_secrets (
      id bigserial PRIMARY KEY,
      endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz
    );
    CREATE INDEX webhook_secrets_endpoint_idx ON webhook_secrets (endpoint_id);

    -- One row per message and endpoint; its id is the message's webhook-id on every attempt.
    -- event_id is not a foreign key (events are partitioned, never deleted); null for test messages.
    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      event_id bigint,
      event_type event_type NOT NULL,
      -- The message's data as sent (json keeps the key order: the body is the same on every attempt).
      payload json NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      -- A worker that took the row owns it until then; a worker that died loses it then.
      locked_until timestamptz,
      last_attempt_at timestamptz,
      last_response_status integer,
      last_error text CHECK (length(last_error) <= 2000),
      last_response_body text CHECK (length(last_response_body) <= 1024),
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz
    );
    -- Fan-out is idempotent: an event reaches an endpoint once.
    CREATE UNIQUE INDEX webhook_deliveries_event_idx ON webhook_deliveries (endpoint_id, event_id) WHERE event_id IS NOT NULL;
    -- The endpoint's delivery log, newest first (also the endpoint foreign key's index).
    CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC);
    CREATE INDEX webhook_deliveries_account_idx ON webhook_deliveries (account_id);
    -- The claim: due pending rows.
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
    -- Attempts in flight per endpoint (the per-endpoint concurrency bound): only leased rows.
    CREATE INDEX webhook_deliveries_in_flight_idx ON webhook_deliveries (endpoint_id) WHERE locked_until IS NOT NULL;

    -- After every statement that inserts events: one fan-out job for the statement's id range,
    -- in the inserting transaction, when any endpoint is enabled (one index probe otherwise).
    CREATE FUNCTION webhooks_queue_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      lo bigint; hi bigint; d0 date; d1 date;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE status = 'enabled') THEN
        RETURN NULL;
      END IF;
      SELECT min(id), max(id), min(event_date), max(event_date) INTO lo, hi, d0, d1 FROM new_events;
      IF lo IS NULL THEN
        RETURN NULL;
      END IF;
      PERFORM graphile_worker.add_job('webhooks.fanout',
        json_build_object('from_id', lo, 'to_id', hi, 'from_date', d0, 'to_date', d1),
        job_key => 'webhooks.fanout:' || lo || '-' || hi, max_attempts => 25);
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER events_webhooks_fan_out AFTER INSERT ON events
      REFERENCING NEW TABLE AS new_events
      FOR EACH STATEMENT EXECUTE FUNCTION webhooks_queue_fan_out();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER events_webhooks_fan_out ON events;
    DROP FUNCTION webhooks_queue_fan_out();
    DROP TABLE webhook_deliveries, webhook_secrets, webhook_endpoints;
  `.execute(db);
}
