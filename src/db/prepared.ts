import { createHash } from 'node:crypto';
import type { Kysely, RawBuilder } from 'kysely';
import { poolOf } from './database.ts';

const names = new Map<string, string>();

/**
 * Runs a statement as a named prepared statement: PostgreSQL parses and plans it once per
 * connection (and, after a few runs, keeps a generic plan) instead of at every call. For the few
 * statements every priced request makes, where planning cost as much as executing (measured with
 * pg_stat_statements: docs/benchmarks.md, "Requests per core"). Kysely sends unnamed statements
 * only, so this goes to the pool behind `db` directly; on a transaction (or any handle not made by
 * createDatabase) the statement runs the ordinary way. Each distinct text gets its own name, so the
 * statements a process prepares are bounded by the shapes in the code, not by the values.
 * A migration that changes the columns such a statement returns wants the API processes restarted
 * (PostgreSQL refuses a prepared statement whose result type changed).
 */
export async function executePrepared<R, DB>(db: Kysely<DB>, query: RawBuilder<R>): Promise<{ rows: R[] }> {
  const compiled = query.compile(db);
  const pool = poolOf(db);
  if (!pool) return db.executeQuery(compiled);
  let name = names.get(compiled.sql);
  if (!name) {
    name = `rw_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 16)}`;
    if (names.size < 1000) names.set(compiled.sql, name);
  }
  const res = await pool.query({ name, text: compiled.sql, values: [...compiled.parameters] });
  return { rows: res.rows as R[] };
}
