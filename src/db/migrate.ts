import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, type MigrationResultSet } from 'kysely';
import { runMigrations as runWorkerMigrations } from 'graphile-worker';
import type pg from 'pg';
import { Logger as WorkerLogger } from 'graphile-worker';
import type { Db } from './database.ts';

const migrationFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies the schema migrations and graphile-worker's own. Kysely's Postgres adapter takes an
 * advisory lock and runs every migration in one transaction, so processes starting together
 * do not race; graphile-worker serialises its migrations the same way.
 */
export async function migrateToLatest(db: Db, pool: pg.Pool): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder }),
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const which = failed ? `Migration ${failed.migrationName}` : 'Migration';
    throw new Error(`${which} failed: ${result.error instanceof Error ? result.error.message : String(result.error)}`);
  }
  await runWorkerMigrations({ pgPool: pool, logger: quietWorkerLogger });
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

let latest: Promise<string> | null = null;

/**
 * The name of the newest schema migration this build has (its file name without the extension):
 * a database whose migration table holds it is migrated for this build (the health check).
 */
export function latestMigrationName(): Promise<string> {
  latest ??= fs.readdir(migrationFolder).then((files) => {
    const names = files.filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts')).map((f) => f.replace(/\.(ts|js)$/, ''));
    return names.sort().at(-1)!;
  });
  return latest;
}

// graphile-worker reports each of its migration steps at info; only problems matter here.
const quietWorkerLogger = new WorkerLogger(() => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`[graphile-worker] ${message}`);
});
