import { sql, type Kysely } from 'kysely';

// Which process runs each graphile-worker worker, so that the jobs of a worker whose process died
// (SIGKILL, a crash, a lost machine) are handed back at once rather than after graphile-worker's
// four hours (src/jobs/recovery.ts). A process is alive while it holds the session advisory lock
// (73081, process_key); dead_since is when a sweep first found it without.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE job_worker_liveness (
      worker_id text PRIMARY KEY,
      process_key integer NOT NULL CHECK (process_key > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      dead_since timestamptz
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE job_worker_liveness`.execute(db);
}
