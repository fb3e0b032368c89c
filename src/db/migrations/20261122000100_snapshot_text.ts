import { sql, type Kysely } from 'kysely';

// companies.snapshot becomes text. It is only ever written by the service (JSON.stringify of the
// canonical snapshot) and never queried inside, so the `json` type's validation on every insert
// and update bought nothing: about 6 µs of PostgreSQL CPU a company on a load, a seventh of its
// share (docs/benchmarks-history.md, "bytes between threads, less garbage, no JSON validation in PostgreSQL"). Readers that want an object cast it (`snapshot::json`).
// json to text is no binary-coercible cast, so PostgreSQL rewrites the table and its indexes under
// an exclusive lock: 1.6 s per 100,000 companies measured, about a minute for the full registry.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE companies ALTER COLUMN snapshot TYPE text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE companies ALTER COLUMN snapshot TYPE json USING snapshot::json`.execute(db);
}
