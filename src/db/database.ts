import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { trackPoolClients } from './pinned-connection.ts';

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
 * Runs the pool's onConnect hook on a client made apart from the pool with the pool's settings
 * (a LISTEN or liveness connection), so that it is treated as the pool's own connections are.
 */
export async function runConnectHook(pool: pg.Pool, client: pg.ClientBase): Promise<void> {
  await (pool.options as { onConnect?: ConnectHook }).onConnect?.(client);
}

/** What a database was made from by createDatabase: its connection string and application name. */
export interface DatabaseConnection {
  url: string;
  applicationName: string;
}

const connections = new WeakMap<object, DatabaseConnection>();

/**
 * The connection string and application name a database was made from by createDatabase: a
 * worker thread opens its own connection with them. Undefined for any other database.
 */
export function connectionOf(db: object): DatabaseConnection | undefined {
  return connections.get(db);
}

/** Called on each new connection before it is used (an error ends the connection and fails its checkout). */
export type ConnectHook = (client: pg.ClientBase) => Promise<void>;

export function createDatabase(
  url: string,
  options: { max?: number; applicationName?: string; onConnect?: ConnectHook } = {},
): DatabaseHandle {
  const applicationName = options.applicationName ?? 'regwatch';
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: applicationName,
    idleTimeoutMillis: 30_000,
    // pg-pool (3.10 and later) awaits the hook; @types/pg declares it as returning void.
    onConnect: options.onConnect as ((client: pg.ClientBase) => void) | undefined,
  });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  // A transaction's own client, for COPY (src/db/pinned-connection.ts).
  trackPoolClients(pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  connections.set(db, { url, applicationName });
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
