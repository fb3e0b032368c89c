import type { Kysely } from 'kysely';
import type { RegistryTables } from '../tables.ts';

/** Accepts the app's Kysely (any schema) or a transaction of it. Functions of the registry's store take it (`db` or `trx`) first. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RegistryExecutor = Kysely<any>;

export function registryDb(db: RegistryExecutor): Kysely<RegistryTables> {
  return db as unknown as Kysely<RegistryTables>;
}
