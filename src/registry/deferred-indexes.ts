import { sql } from 'kysely';
import type { RegistryExecutor } from './store/executor.ts';
import { RUN_OWNER_ALIVE } from './store/locks.ts';

/**
 * A first load into an empty registry builds the secondary indexes of `companies` and
 * `company_identifiers` once, at its end, instead of entry by entry as each batch lands: what
 * `pg_restore` does, and about an eighth faster at 1,000,000 companies (the median of the runs
 * measured), index builds included (docs/benchmarks-history.md, "a first load builds its indexes at the end"). Only indexes that enforce nothing are deferred: the primary
 * keys, and the identifiers' uniqueness that tells a new company from a known one, stay in place.
 *
 * The run records each index's definition in `deferred_indexes` in the transaction that drops it,
 * and builds them again when it ends, whether it completed or failed. A process that dies
 * mid-load leaves its rows behind; the next daily run of any source builds them before it writes
 * anything (a run whose process is alive holds its session lock, which is how its rows are told
 * from those of a dead one), and so does every process start (src/runtime.ts, after the migrations).
 */

export interface DeferredIndex {
  name: string;
  definition: string;
}

/** Class of the transaction lock that keeps two processes from building one index at once. */
const BUILD_LOCK_CLASS = 73_082;

/**
 * Drops the deferrable indexes and records them for `runId`; returns what was dropped (nothing
 * when another process holds the tables and the lock wait runs out: the load then goes on with
 * its indexes in place).
 */
export async function deferSecondaryIndexes(db: RegistryExecutor, runId: string, lockTimeoutMs = 5000): Promise<DeferredIndex[]> {
  try {
    return await db.transaction().execute(async (trx) => {
      // DROP INDEX takes its table's exclusive lock: never queue every reader behind it for long.
      await sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(trx);
      const { rows } = await sql<{ schema: string; name: string; definition: string }>`
        SELECT n.nspname AS schema, c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
        FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE i.indrelid IN (to_regclass('companies'), to_regclass('company_identifiers'))
          AND NOT i.indisunique AND NOT i.indisprimary AND i.indisvalid
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
        ORDER BY c.relname`.execute(trx);
      const dropped: DeferredIndex[] = [];
      for (const r of rows) {
        if (!r.definition.startsWith('CREATE INDEX ')) continue;
        const { numAffectedRows } = await sql`
          INSERT INTO deferred_indexes (index_name, definition, run_id) VALUES (${r.name}, ${r.definition}, ${runId})
          ON CONFLICT (index_name) DO NOTHING`.execute(trx);
        if (Number(numAffectedRows ?? 0) === 0) continue;
        await sql`DROP INDEX ${sql.id(r.schema, r.name)}`.execute(trx);
        dropped.push({ name: r.name, definition: r.definition });
      }
      return dropped;
    });
  } catch (e) {
    // 55P03: the lock wait ran out. Anything else is a real failure.
    if ((e as { code?: string }).code === '55P03') return [];
    throw e;
  }
}

/**
 * Builds the deferred indexes of `ownRunId` and of runs whose process is gone (rows of a run that
 * is alive elsewhere are left to it), two at a time: they are built on two connections, as the
 * machine has the cores to spare once the load has ended. Returns the names built.
 */
export async function restoreDeferredIndexes(
  db: RegistryExecutor,
  ownRunId: string | null,
  onBuilt?: (name: string, ms: number) => void,
): Promise<string[]> {
  // Before the migration that creates it, there is nothing to restore.
  const { rows: exists } = await sql<{ t: string | null }>`SELECT to_regclass('deferred_indexes')::text AS t`.execute(db);
  if (exists[0]?.t === null) return [];
  const { rows } = await sql<{ name: string }>`
    SELECT d.index_name AS name
    FROM deferred_indexes d LEFT JOIN daily_runs r ON r.id = d.run_id
    WHERE d.run_id = ${ownRunId} OR r.id IS NULL OR NOT ${RUN_OWNER_ALIVE}
    ORDER BY d.index_name`.execute(db);
  const queue = rows.map((r) => r.name);
  const built: string[] = [];
  const lane = async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const started = performance.now();
      if (!(await buildDeferredIndex(db, name))) continue;
      built.push(name);
      onBuilt?.(name, Math.round(performance.now() - started));
    }
  };
  await Promise.all([lane(), lane()]);
  return built.sort();
}

/** Builds one recorded index and forgets it, in one transaction; false when another process did first. */
async function buildDeferredIndex(db: RegistryExecutor, name: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${BUILD_LOCK_CLASS}::int, hashtext(${name}))`.execute(trx);
    const { rows } = await sql<{
      definition: string;
    }>`DELETE FROM deferred_indexes WHERE index_name = ${name} RETURNING definition`.execute(trx);
    const definition = rows[0]?.definition;
    if (definition === undefined) return false;
    // A larger sort memory than the default 64 MB builds the indexes of a few million companies in memory.
    await sql`SELECT set_config('maintenance_work_mem', '256MB', true)`.execute(trx);
    // Two builds run at once already (restoreDeferredIndexes), one a core; parallel workers only
    // shared those cores and split the sort memory into temporary files (docs/benchmarks.md).
    await sql`SELECT set_config('max_parallel_maintenance_workers', '0', true)`.execute(trx);
    // IF NOT EXISTS: an index someone built by hand meanwhile is kept as it is.
    await sql.raw(definition.replace(/^CREATE INDEX /, 'CREATE INDEX IF NOT EXISTS ')).execute(trx);
    return true;
  });
}
