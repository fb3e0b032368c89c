import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import { latestMigrationName } from '../db/migrate.ts';

/**
 * GET /health's answer (DECISIONS 1): 200 `{status: "ok"}` once the database answers and holds
 * this build's newest migration, 503 otherwise (a database re-created empty answers, but is not
 * ready). Served by the API (app.ts) and, with METRICS_PORT, by every process (http/metrics.ts).
 */
export async function databaseHealth(db: Db): Promise<{ code: 200 | 503; body: { status: string; message?: string } }> {
  const unavailable = (message: string) => ({ code: 503 as const, body: { status: 'unavailable', message } });
  try {
    const latest = await latestMigrationName();
    const { rows } = await sql<{ ok: boolean }>`SELECT EXISTS (SELECT 1 FROM kysely_migration WHERE name = ${latest}) AS ok`.execute(db);
    if (rows[0]?.ok !== true) return unavailable('The database is not migrated.');
    return { code: 200, body: { status: 'ok' } };
  } catch (e) {
    return unavailable((e as { code?: string }).code === '42P01' ? 'The database is not migrated.' : 'The database is not reachable.');
  }
}
