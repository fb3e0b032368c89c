import { sql, type Kysely } from 'kysely';
import { QUEUE_FAN_OUT, RELEASE_FAN_OUT } from './20261201000100_webhook_fanout_holds.ts';

// A batch of a running run is held (20261201000100_webhook_fanout_holds) whether or not any
// endpoint is enabled as it is written. Before, a batch written while no endpoint anywhere was
// enabled queued nothing, so an endpoint created during the run (its account watching the
// companies already) never got that run's events, though DECISIONS 8 sends them "after the
// daily run that detected them commits" and an endpoint of any other account being there made
// the difference. The run's end then sends the held batches when an endpoint is enabled, and
// drops them (the holds and their waiting jobs) when none is: a service without webhooks pays a
// hold row and a waiting job a batch during the run, and nothing after it. Events of no running
// run (an on-demand import) still queue a fan-out only while an endpoint is enabled.
const HOLD_SECONDS = 60;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION webhooks_queue_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      lo bigint; hi bigint; d0 date; d1 date; run bigint; k text; p json; running boolean;
    BEGIN
      SELECT min(id), max(id), min(event_date), max(event_date), max(run_id) INTO lo, hi, d0, d1, run FROM new_events;
      IF lo IS NULL THEN
        RETURN NULL;
      END IF;
      running := run IS NOT NULL AND EXISTS (SELECT 1 FROM daily_runs WHERE id = run AND status = 'running');
      IF NOT running AND NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE status = 'enabled') THEN
        RETURN NULL;
      END IF;
      k := 'webhooks.fanout:' || lo || '-' || hi;
      p := json_build_object('from_id', lo, 'to_id', hi, 'from_date', d0, 'to_date', d1);
      IF running THEN
        INSERT INTO webhook_fanout_holds (job_key, run_id, payload) VALUES (k, run, p) ON CONFLICT (job_key) DO NOTHING;
        PERFORM graphile_worker.add_job('webhooks.fanout', p, job_key => k, max_attempts => 25,
          run_at => now() + make_interval(secs => ${sql.lit(HOLD_SECONDS)}));
      ELSE
        PERFORM graphile_worker.add_job('webhooks.fanout', p, job_key => k, max_attempts => 25);
      END IF;
      RETURN NULL;
    END
    $fn$;

    CREATE OR REPLACE FUNCTION webhooks_release_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      h record;
      send boolean := EXISTS (SELECT 1 FROM webhook_endpoints WHERE status = 'enabled');
    BEGIN
      -- Each job due at its own clock_timestamp(), increasing in the events' order: the workers take
      -- due jobs by run_at, and jobs of one run_at in no set order (seen: the last batch's first).
      FOR h IN SELECT job_key, payload FROM webhook_fanout_holds WHERE run_id = NEW.id ORDER BY (payload->>'from_id')::bigint LOOP
        IF send THEN
          PERFORM graphile_worker.add_job('webhooks.fanout', h.payload, job_key => h.job_key, max_attempts => 25, run_at => clock_timestamp());
        ELSE
          PERFORM graphile_worker.remove_job(h.job_key);
        END IF;
      END LOOP;
      DELETE FROM webhook_fanout_holds WHERE run_id = NEW.id;
      RETURN NULL;
    END
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ${QUEUE_FAN_OUT}
    ${RELEASE_FAN_OUT}
  `.execute(db);
}
