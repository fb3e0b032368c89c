/**
 * The message table's two writes in isolation, before and after migration
 * 20261128000300_webhook_deliveries_keys: PostgreSQL's CPU a message for the fan-out's INSERT
 * (1,000 endpoints, `--messages` messages in statements of 2,000, the endpoints taken FOR KEY
 * SHARE as the fan-out takes them) and for the outcome's UPDATE (recordAttempts, batches of 500
 * 2xx, as the dispatcher flushes them). The schema alternates (down, up, down, ...) in one
 * database, `--rounds` times each, so both are measured minutes apart on the same machine.
 *
 *   node --import tsx bench/webhooks-store.ts [--messages 100000] [--rounds 3]
 *
 * The CPU is the backend's (utime + stime from /proc; one connection), so the client's work is not in it; the
 * embedded PostgreSQL (bench/registry-db.ts) runs on this machine.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import { recordAttempts, type RecordedAttempt } from '../src/modules/webhooks/dispatch-repo.ts';
import { processCpuSeconds } from './machine.ts';
import { argValue, openBenchDatabase } from './registry-db.ts';

const messages = Number(argValue('messages', '100000'));
const rounds = Number(argValue('rounds', '3'));
const ENDPOINTS = 1000;
const BEFORE = '20261128000200_webhook_deliveries_account_fk';
const bench = await openBenchDatabase(`regwatch_bench_webhooks_store_${process.pid}`);
const db = bench.handle.db;
const migrator = new Migrator({
  db,
  provider: new FileMigrationProvider({ fs, path, migrationFolder: path.join(import.meta.dirname, '..', 'src', 'db', 'migrations') }),
});

type Conn = Parameters<Parameters<ReturnType<typeof db.connection>['execute']>[0]>[0];

/** The CPU seconds of the backend behind connection `c`. */
async function backendSeconds(c: Conn): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(c);
  const seconds = processCpuSeconds(rows[0]!.pid);
  if (seconds === null) throw new Error(`backend ${rows[0]!.pid} is gone`);
  return seconds;
}

const { rows: accts } = await sql<{ id: string }>`
  INSERT INTO accounts (user_ref, email, name, status)
  SELECT 'STORE' || g, 'store' || g || '@bench.test', 'bench', 'initialized' FROM generate_series(1, ${ENDPOINTS}) g RETURNING id`.execute(
  db,
);
const { rows: eps } = await sql<{ id: string }>`
  INSERT INTO webhook_endpoints (account_id, url) SELECT id, 'http://127.0.0.1:9/e' FROM unnest(${accts.map((a) => a.id)}::bigint[]) AS id
  RETURNING id`.execute(db);
const PAYLOAD =
  '{"id":123456789,"event_type":"COMPANY_NAME_CHANGED","old_value":"KOWALSKI 1234 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ","new_value":"KOWALSKI 1234 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ NOWA 3","event_date":"2026-11-04","severity":"info","primary_identifier":"0000001235","identifier_type":"KRS","company_name":"KOWALSKI 1234 SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ NOWA 3"}';

let eventId = 0;
async function measure(c: Conn, schema: 'before' | 'after'): Promise<{ insert_us: number; update_us: number }> {
  await sql`TRUNCATE webhook_deliveries`.execute(c);
  await sql`CHECKPOINT`.execute(c);
  const at = new Date();
  const per = 2000;
  const i0 = await backendSeconds(c);
  for (let done = 0; done < messages; done += per) {
    // Two messages an endpoint a statement, endpoint by endpoint, as a batch of the day's events fans out.
    const from = eventId;
    eventId += per;
    await sql`
      WITH ep AS MATERIALIZED (
        SELECT id, account_id FROM webhook_endpoints WHERE status = 'enabled' ${schema === 'after' ? sql`FOR KEY SHARE` : sql``}
      )
      INSERT INTO webhook_deliveries (endpoint_id, account_id, event_id, event_type, payload, next_attempt_at, created_at)
      SELECT ep.id, ep.account_id, ${from}::bigint + (row_number() OVER ()), 'COMPANY_NAME_CHANGED', ${PAYLOAD}::json, ${at}, ${at}
      FROM ep CROSS JOIN generate_series(1, ${per / ENDPOINTS}) g
      ORDER BY ep.id
      ON CONFLICT (endpoint_id, event_id) WHERE event_id IS NOT NULL DO NOTHING`.execute(c);
  }
  const i1 = await backendSeconds(c);
  // Statistics of the filled table, as the day's table has (after TRUNCATE the planner would
  // guess, and may join the outcomes' batch by a scan).
  await sql`ANALYZE webhook_deliveries`.execute(c);
  const { rows } = await sql<{ id: string; endpoint_id: string }>`
    SELECT id, endpoint_id FROM webhook_deliveries ORDER BY endpoint_id, id`.execute(c);
  // Outcomes in batches of 500, a few endpoints' messages each, as the dispatcher records them.
  const u0 = await backendSeconds(c);
  for (let i = 0; i < rows.length; i += 500) {
    const batch: RecordedAttempt[] = rows.slice(i, i + 500).map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      ok: true,
      gone: false,
      status: 204,
      error: null,
      body: null,
      attemptsBefore: 0,
      dueBefore: at,
      nextAttemptAt: null,
      at,
      endedAt: at,
    }));
    await recordAttempts(c, batch, at, { owner: 'store', ids: [] });
  }
  const u1 = await backendSeconds(c);
  return { insert_us: Math.round(((i1 - i0) * 1e6) / messages), update_us: Math.round(((u1 - u0) * 1e6) / rows.length) };
}

try {
  console.log(`${eps.length} endpoints, ${messages} messages a measure`);
  for (let r = 0; r < rounds; r++) {
    for (const schema of ['before', 'after'] as const) {
      const m = schema === 'before' ? await migrator.migrateTo(BEFORE) : await migrator.migrateToLatest();
      if (m.error) throw m.error;
      const result = await db.connection().execute((c) => measure(c, schema));
      console.log(JSON.stringify({ round: r + 1, schema, ...result }));
    }
  }
} finally {
  await bench.dispose();
}
