import { sql, type Kysely } from 'kysely';

// Webhook messages go out after the run that detected their events ends (DECISIONS 8: "after the
// daily run that detected them commits"), not beside it: on two cores the fan-out's inserts and
// the deliveries beside a run made it 20-70 % slower (docs/benchmarks.md, "Webhooks").
//
// The fan-out job each batch's events queue (20261125000100_webhooks) is still queued in the
// events' own transaction, so nothing is lost if the run's process dies, but while the events'
// run is running it is queued to run only HOLD_SECONDS later, and recorded in
// webhook_fanout_holds. When the run ends (completed or failed), the run's last transaction makes
// its held jobs due at once, in the events' order (add_job with the same job key replaces the
// waiting job and wakes the workers). A run whose process died never ends: its jobs run when
// their HOLD_SECONDS are up, as they would have without the hold. A fan-out job that
// has run forgets its hold (webhooks/jobs.ts), so a run that ends later does not queue it again.
//
// HOLD_SECONDS bounds what a long run (minutes, a full export of millions) adds to its first
// events' delay: after it their messages go out beside the run.
const HOLD_SECONDS = 60;

/** The functions as this migration makes them (20261204000100's down() puts them back). */
export const QUEUE_FAN_OUT = sql`
    CREATE OR REPLACE FUNCTION webhooks_queue_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      lo bigint; hi bigint; d0 date; d1 date; run bigint; k text; p json;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE status = 'enabled') THEN
        RETURN NULL;
      END IF;
      SELECT min(id), max(id), min(event_date), max(event_date), max(run_id) INTO lo, hi, d0, d1, run FROM new_events;
      IF lo IS NULL THEN
        RETURN NULL;
      END IF;
      k := 'webhooks.fanout:' || lo || '-' || hi;
      p := json_build_object('from_id', lo, 'to_id', hi, 'from_date', d0, 'to_date', d1);
      IF run IS NOT NULL AND EXISTS (SELECT 1 FROM daily_runs WHERE id = run AND status = 'running') THEN
        INSERT INTO webhook_fanout_holds (job_key, run_id, payload) VALUES (k, run, p) ON CONFLICT (job_key) DO NOTHING;
        PERFORM graphile_worker.add_job('webhooks.fanout', p, job_key => k, max_attempts => 25,
          run_at => now() + make_interval(secs => ${sql.lit(HOLD_SECONDS)}));
      ELSE
        PERFORM graphile_worker.add_job('webhooks.fanout', p, job_key => k, max_attempts => 25);
      END IF;
      RETURN NULL;
    END
    $fn$;
`;
export const RELEASE_FAN_OUT = sql`
    CREATE OR REPLACE FUNCTION webhooks_release_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      h record;
    BEGIN
      -- Each job due at its own clock_timestamp(), increasing in the events' order: the workers take
      -- due jobs by run_at, and jobs of one run_at in no set order (seen: the last batch's first).
      FOR h IN SELECT job_key, payload FROM webhook_fanout_holds WHERE run_id = NEW.id ORDER BY (payload->>'from_id')::bigint LOOP
        PERFORM graphile_worker.add_job('webhooks.fanout', h.payload, job_key => h.job_key, max_attempts => 25, run_at => clock_timestamp());
      END LOOP;
      DELETE FROM webhook_fanout_holds WHERE run_id = NEW.id;
      RETURN NULL;
    END
    $fn$;
`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_fanout_holds (
      job_key text PRIMARY KEY,
      run_id bigint NOT NULL,
      payload json NOT NULL
    );
    CREATE INDEX webhook_fanout_holds_run_idx ON webhook_fanout_holds (run_id);

    ${QUEUE_FAN_OUT}
    ${RELEASE_FAN_OUT}
    CREATE TRIGGER daily_runs_webhooks_release AFTER UPDATE OF status ON daily_runs
      FOR EACH ROW WHEN (OLD.status = 'running' AND NEW.status <> 'running')
      EXECUTE FUNCTION webhooks_release_fan_out();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER daily_runs_webhooks_release ON daily_runs;
    DROP FUNCTION webhooks_release_fan_out();
    CREATE OR REPLACE FUNCTION webhooks_queue_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
    DROP TABLE webhook_fanout_holds;
  `.execute(db);
}
