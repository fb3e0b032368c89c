import { sql, type Kysely } from 'kysely';

// The secondary indexes a first load into an empty registry dropped, to build them once at its
// end rather than entry by entry (src/registry/deferred-indexes.ts): each one's definition, as
// pg_get_indexdef gave it, and the run that dropped it. A row outlives its index only while that
// run is loading, or after its process died; the next run (or start) builds what is left.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE deferred_indexes (
      index_name text PRIMARY KEY,
      definition text NOT NULL CHECK (definition LIKE 'CREATE INDEX %'),
      run_id bigint NOT NULL,
      deferred_at timestamptz NOT NULL DEFAULT now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE deferred_indexes`.execute(db);
}
