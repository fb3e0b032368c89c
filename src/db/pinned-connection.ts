import { CompiledQuery, type Kysely } from 'kysely';
import type pg from 'pg';

/**
 * The pg client behind a Kysely connection, for what Kysely cannot send: `COPY … FROM STDIN`
 * (src/registry/store/company-copy.ts) goes through pg-copy-streams on the transaction's own
 * client. Kysely hands out no client, so createDatabase tracks its pool's clients by their
 * backend's process id (pg's `processID`, from BackendKeyData) and a transaction finds its own by
 * asking PostgreSQL for `pg_backend_pid()`: a backend serves one connection, so the answer names
 * exactly the client the transaction holds, with no reliance on Kysely's private fields.
 */

const trackedPools = new WeakMap<pg.Pool, Map<number, pg.PoolClient>>();

/** Tracks the clients `pool` opens from now on (before it opens any: createDatabase). */
export function trackPoolClients(pool: pg.Pool): void {
  if (trackedPools.has(pool)) return;
  const byBackend = new Map<number, pg.PoolClient>();
  trackedPools.set(pool, byBackend);
  pool.on('connect', (client) => {
    // pg sets processID from BackendKeyData before the connection is ready.
    const pid = (client as pg.PoolClient & { processID: number | null }).processID;
    if (pid !== null) byBackend.set(pid, client);
  });
  pool.on('remove', (client) => {
    const pid = (client as pg.PoolClient & { processID: number | null }).processID;
    if (pid !== null && byBackend.get(pid) === client) byBackend.delete(pid);
  });
}

/**
 * The client of `pool` connected to the backend `backendPid` (what `pg_backend_pid()` returned
 * on the connection in question), or undefined when the pool is not tracked or holds no such
 * client.
 */
export function clientOfBackend(pool: pg.Pool | undefined, backendPid: number): pg.PoolClient | undefined {
  if (pool === undefined) return undefined;
  return trackedPools.get(pool)?.get(backendPid);
}

/**
 * The pg client a Kysely transaction (or pinned connection) `trx` runs on, when it comes from
 * `pool` and the pool is tracked; undefined otherwise. One round trip.
 */
export async function transactionClient(
  pool: pg.Pool | undefined,
  trx: { executeQuery: Kysely<unknown>['executeQuery'] },
): Promise<pg.PoolClient | undefined> {
  if (pool === undefined || !trackedPools.has(pool)) return undefined;
  const { rows } = await trx.executeQuery<{ pid: number }>(CompiledQuery.raw('SELECT pg_backend_pid() AS pid'));
  return clientOfBackend(pool, rows[0]!.pid);
}
