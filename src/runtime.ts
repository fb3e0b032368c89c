import type { Logger } from 'pino';
import { sql } from 'kysely';
import type { Config } from './config.ts';
import { createDatabase, type ConnectHook, type DatabaseHandle } from './db/database.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.ts';
import { migrateToLatest } from './db/migrate.ts';
import { restoreDeferredIndexes } from './registry/deferred-indexes.ts';

/** What every entry point (server, CLI) needs: a migrated database, and a way to let it go. */
export interface Runtime {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  embedded: EmbeddedDatabase | null;
  /** Whether the database had no companies-independent state before: set by the caller. */
  close(): Promise<void>;
}

export async function openRuntime(
  config: Config,
  logger: Logger,
  /** onConnect: run on each of the pool's new connections (and on those made with its settings). */
  options: { migrate?: boolean; poolSize?: number; onConnect?: ConnectHook } = {},
): Promise<Runtime> {
  let embedded: EmbeddedDatabase | null = null;
  let url = config.databaseUrl;
  if (!url) {
    embedded = await startEmbeddedDatabase(config.dataDir, logger);
    url = embedded.url;
  }
  const database = createDatabase(url, { max: options.poolSize ?? 10, onConnect: options.onConnect });
  try {
    if (options.migrate !== false) {
      const applied = await migrateToLatest(database.db, database.pool);
      if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated');
    }
    // A database that cannot be reached (or does not exist) is the caller's error, said once, not
    // an index build's (commands open the runtime without migrating).
    if (options.migrate === false) await sql`SELECT 1`.execute(database.db);
    // A first load whose process died leaves its deferred indexes unbuilt (registry/deferred-indexes.ts).
    // A failure here (say, a full disk) must not keep the process from starting: the next run tries again.
    try {
      const built = await restoreDeferredIndexes(database.db, null);
      if (built.length > 0) logger.warn({ indexes: built }, 'built the indexes a first load left unbuilt');
    } catch (e) {
      logger.error({ err: e instanceof Error ? e.message : String(e) }, 'could not build the indexes a first load left unbuilt');
    }
  } catch (e) {
    await database.close();
    await embedded?.stop();
    throw e;
  }
  return {
    config,
    logger,
    database,
    embedded,
    close: async () => {
      await database.close();
      await embedded?.stop();
    },
  };
}
