/**
 * The fan-out's statement alone (src/modules/webhooks/repo.ts fanOutEvents), on a database that
 * bench/webhooks.ts kept (`--keep`, on the server of DATABASE_URL): PostgreSQL's CPU an event for a
 * day's events fanned out again in id ranges of 2,000 (a batch of the daily run), each variant in
 * a transaction rolled back, the variants alternating:
 *
 * - `plain`: the INSERT as the fan-out job runs it first (no ON CONFLICT);
 * - `again`: the same with ON CONFLICT DO NOTHING, as the job runs it after a unique violation;
 * - `select`: the SELECT alone (the rows and their payloads, nothing written).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/webhooks.ts --rounds 1 --keep
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/regwatch_bench_webhooks_PID node --import tsx bench/webhooks-fanout.ts [--date 2026-11-04] [--rounds 3]
 *
 * The day's messages are deleted first and every endpoint enabled (the kept database is the
 * benchmark's scratch). The CPU is the backend's (utime + stime from /proc; one connection).
 */
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { fanOutEvents } from '../src/modules/webhooks/repo.ts';
import { processCpuSeconds } from './machine.ts';
import { argValue } from './registry-db.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL: the database bench/webhooks.ts --keep kept');
const date = argValue('date', '2026-11-04');
const rounds = Number(argValue('rounds', '3'));
const handle = createDatabase(url, { max: 1 });
const RANGE = 2000;

try {
  await handle.db.connection().execute(async (c) => {
    const { rows: pids } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(c);
    const cpu = () => processCpuSeconds(pids[0]!.pid)!;
    const { rows } = await sql<{ lo: number; hi: number }>`
      SELECT min(id)::float8 AS lo, max(id)::float8 AS hi FROM events WHERE event_date = ${date}::date`.execute(c);
    const { lo, hi } = rows[0]!;
    if (lo === null) throw new Error(`no events on ${date}`);
    await sql`UPDATE webhook_endpoints SET status = 'enabled'`.execute(c);
    await sql`DELETE FROM webhook_deliveries WHERE event_id BETWEEN ${lo} AND ${hi}`.execute(c);
    await sql`VACUUM ANALYZE webhook_deliveries`.execute(c);
    const events = hi - lo + 1;
    console.log(JSON.stringify({ date, events, ranges: Math.ceil(events / RANGE) }));
    const variants = {
      plain: (from: number, to: number) =>
        fanOutEvents(c, { fromId: from, toId: to, fromDate: date, toDate: date, at: new Date(), again: false }),
      again: (from: number, to: number) =>
        fanOutEvents(c, { fromId: from, toId: to, fromDate: date, toDate: date, at: new Date(), again: true }),
      select: async (from: number, to: number) => {
        // About the SELECT of fanOutEvents (the same probes and payload), counted instead of inserted.
        const r = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM (
            SELECT f.event_id FROM webhook_endpoints ep
            CROSS JOIN LATERAL (SELECT f.event_id, f.event_type, f.event_date, f.company_id FROM watchlist_feed f
              WHERE f.account_id = ep.account_id AND f.event_id BETWEEN ${from} AND ${to} AND f.event_date = ${date}::date OFFSET 0) f
            CROSS JOIN LATERAL (SELECT to_json(x) AS payload FROM (SELECT e.old_value, e.new_value, e.severity, c.name, c.primary_identifier
              FROM events e, companies c WHERE e.event_date = f.event_date AND e.id = f.event_id AND c.id = f.company_id) x) p
            WHERE ep.status = 'enabled' ORDER BY f.event_id, ep.id) s`.execute(c);
        return r.rows[0]!.n;
      },
    };
    for (let round = 1; round <= rounds; round++) {
      for (const [name, run] of Object.entries(variants)) {
        await sql`BEGIN`.execute(c);
        const c0 = cpu();
        const t0 = performance.now();
        let n = 0;
        for (let from = lo; from <= hi; from += RANGE) n += await run(from, Math.min(hi, from + RANGE - 1));
        const seconds = cpu() - c0;
        const wall = performance.now() - t0;
        await sql`ROLLBACK`.execute(c);
        await sql`VACUUM webhook_deliveries`.execute(c);
        console.log(
          JSON.stringify({
            round,
            variant: name,
            rows: n,
            cpu_us_an_event: Math.round((seconds * 1e6) / events),
            wall_ms: Math.round(wall),
          }),
        );
      }
    }
  });
} finally {
  await handle.close();
}
