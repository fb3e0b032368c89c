import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { connectionOf, type Db } from '../../db/database.ts';
import type { Executor } from './repo.ts';

/**
 * "Nothing more is sent to it" (DECISIONS 8) from the moment a DELETE or a disabling PATCH
 * answers: the transaction that deletes, disables or re-points an endpoint notifies this channel,
 * and every dispatcher run (in any worker process) listens while it runs and, notified, renews
 * its leases at once, which drops an endpoint deleted or disabled and gives its messages read
 * ahead the new URL. Without the notice a run would learn of it at its next renewal, up to 5 s
 * later, and send up to its read-ahead (16 messages) meanwhile. An attempt already under way when
 * the change commits is not called back.
 */
const CHANNEL = 'regwatch_webhook_endpoints';

/** In the transaction of the change: the notice is delivered when it commits, and not at all if it rolls back. */
export async function notifyEndpointChanged(trx: Executor, endpointId: string): Promise<void> {
  await sql`SELECT pg_notify(${CHANNEL}, ${endpointId})`.execute(trx);
}

/**
 * Listens on a connection of its own (LISTEN holds it) until the returned function is called. A
 * database not made by createDatabase, or a connection that fails, listens to nothing: the runs
 * then learn of changes at their renewals, as before.
 */
export async function listenForEndpointChanges(db: Db, onChange: () => void, logger: Logger): Promise<() => Promise<void>> {
  const connection = connectionOf(db);
  if (connection === undefined) return async () => {};
  const client = new pg.Client({ connectionString: connection.url, application_name: `${connection.applicationName}:webhooks-listen` });
  client.on('error', (err) => logger.warn({ err: err.message }, 'webhook endpoint changes: listening connection failed'));
  try {
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'webhook endpoint changes: not listening (leases are renewed every few seconds)');
    await client.end().catch(() => {});
    return async () => {};
  }
  client.on('notification', () => onChange());
  return () => client.end().catch(() => {});
}
