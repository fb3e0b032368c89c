import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

// bigint (int8) as string keeps precision; numeric counts we convert at the edges.
// timestamptz stays a Date (pg's default).
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
export type DbOrTrx = Db | Trx;

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

// `date` columns stay YYYY-MM-DD strings: turning them into a JavaScript Date at local
// midnight shifts calendar days across time zones.
pg.types.setTypeParser(pg.types.builtins.DATE, (v: string) => v);

const pools = new WeakMap<object, pg.Pool>();

/**
 * The pool behind a Kysely instance made by createDatabase, for what Kysely cannot do: a
 * connection of its own with the same settings (LISTEN, src/db/listen.ts). Undefined otherwise.
 */
export function poolOf(db: object): pg.Pool | undefined {
  return pools.get(db);
}

/**
 * The connection settings of a database made by createDatabase, as plain values that can cross
 * to a worker thread (structured clone): a worker opens its own connection with them
 * (createDatabase(settings)). Undefined for any other database.
 */
export function connectionSettingsOf(db: object): ConnectionSettings | undefined {
  const pool = pools.get(db);
  if (!pool) return undefined;
  const options = pool.options as unknown as Record<string, unknown>;
  const out: ConnectionSettings = {};
  // Every own key, the password too (pg-pool hides it from enumeration); functions stay behind.
  for (const key of Object.getOwnPropertyNames(options)) {
    const v = options[key];
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    else if (key === 'ssl' && v !== null && typeof v === 'object') {
      try {
        out[key] = structuredClone(v);
      } catch {
        // An ssl option that cannot be cloned (a callback in it) is left to the defaults.
      }
    }
  }
  return out;
}

/** pg pool settings made of plain values (connectionSettingsOf). */
export type ConnectionSettings = Record<string, unknown>;

export function createDatabase(url: string | ConnectionSettings, options: { max?: number; applicationName?: string } = {}): DatabaseHandle {
  const pool = new pg.Pool({
    ...(typeof url === 'string' ? { connectionString: url } : (url as pg.PoolConfig)),
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'regwatch',
    idleTimeoutMillis: 30_000,
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  let closed = false;
  return {
    db,
    pool,
    close: async () => {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}
