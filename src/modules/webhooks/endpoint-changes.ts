import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import { createNotificationListener } from '../../db/listen.ts';
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
 * Every endpoint of the account, as changed: its messages were stopped (a company unwatched), so
 * the runs holding one read its due messages again rather than send those they had read ahead.
 */
export async function notifyAccountEndpointsChanged(trx: Executor, accountId: string): Promise<void> {
  await sql`SELECT pg_notify(${CHANNEL}, id::text) FROM webhook_endpoints WHERE account_id = ${accountId}`.execute(trx);
}

/**
 * Listens (src/db/listen.ts: a connection of its own with the pool's settings, so a worker at idle
 * priority has its backend at idle priority too) until the returned function is called, naming the
 * endpoint changed. Listening again after the connection dropped counts as a change of every
 * endpoint (null), since notices sent meanwhile are lost. A
 * database not made by createDatabase listens to nothing: runs then learn of changes at their
 * renewals, as they do while the connection is down.
 */
export async function listenForEndpointChanges(
  db: Db,
  onChange: (endpointId: string | null) => void,
  logger: Logger,
): Promise<() => Promise<void>> {
  let started = false;
  const listener = createNotificationListener({
    db,
    channel: CHANNEL,
    onNotify: (payload) => onChange(payload),
    onState: (listening) => {
      if (listening && started) onChange(null);
    },
    onError: (err) => logger.warn({ err: (err as Error).message }, 'webhook endpoint changes: listening connection failed'),
  });
  await listener.start();
  started = true;
  return () => listener.stop();
}
