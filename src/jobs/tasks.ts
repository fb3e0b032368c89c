import { Type } from '@sinclair/typebox';

/**
 * Every graphile-worker task of the service, with the schema its payload must match. One list, so
 * a newcomer sees all background work at a glance and a queued name can never drift from its handler.
 * Names with a colon are crontab entries (graphile-worker's crontab accepts only [_a-zA-Z0-9:/-]).
 */
export const TASKS = {
  sendMail: 'mail.send',
  requeueMail: 'mail:requeue',
  recoverAccount: 'auth.recover',
  watchlistAdd: 'watchlist.add',
  expirePayments: 'wallet:expire-payments',
  registryDailyTick: 'registry:daily-tick',
  registryDaily: 'registry.daily',
} as const;

const DatabaseId = Type.Union([Type.String({ pattern: '^[0-9]{1,19}$' }), Type.Integer({ minimum: 1 })]);

export const SendMailPayload = Type.Object({ id: DatabaseId });
/** `requested_at`: when the recovery was asked for, which the link's expiry counts from (absent in jobs queued before it was added). */
export const RecoverAccountPayload = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 254 }),
  requested_at: Type.Optional(Type.String({ maxLength: 40 })),
});
export const WatchlistAddPayload = Type.Object({ request_id: DatabaseId });
export const RegistryDailyPayload = Type.Object({
  date: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }),
  source: Type.String({ minLength: 1, maxLength: 500 }),
});
/** A crontab job: graphile-worker passes the scheduled time. */
export const CronPayload = Type.Object({ _cron: Type.Optional(Type.Object({ ts: Type.Optional(Type.String({ maxLength: 64 })) })) });
