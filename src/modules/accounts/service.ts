import type { Task } from 'graphile-worker';
import type { Db, DbOrTrx } from '../../db/database.ts';
import type { Clock } from '../../lib/clock.ts';
import { hashSecret, newOneTimeToken, newRef } from '../../lib/ids.ts';
import { ValidationError } from '../../lib/errors.ts';
import { addJob, type JobModule } from '../../jobs/queue.ts';
import { parseJobPayload } from '../../jobs/payload.ts';
import { RecoverAccountPayload, TASKS } from '../../jobs/tasks.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { issueToken, lockAccountTokens } from '../tokens/service.ts';
import { WELCOME_CREDITS, applyLedgerEntry, createWallet } from '../wallet/ledger.ts';

export const ONE_TIME_TOKEN_TTL_MS = 24 * 3600 * 1000;
export const RECOVER_TASK = TASKS.recoverAccount;
export const RECOVERY_MESSAGE =
  'If an account exists for this e-mail, a recovery link has been sent to it. The link is valid for 24 hours.';

export interface AccountsDeps {
  db: Db;
  clock: Clock;
  publicBaseUrl: string;
}

export function recoveryLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/api/v1/auth/recover/confirm?token=${encodeURIComponent(token)}`;
}

export type RecoveryCheck =
  { ok: true; accountId: string; email: string; userRef: string; tokenId: string } | { ok: false; reason: string };

export function createAccountsService(deps: AccountsDeps) {
  const { db, clock } = deps;

  /** Ended by another link of the account being used: confirmRecovery sets its expiry to that use. */
  async function isSuperseded(ex: DbOrTrx, tokenId: string, accountId: string, expiresAt: Date): Promise<boolean> {
    const other = await ex
      .selectFrom('one_time_tokens')
      .select('id')
      .where('account_id', '=', accountId)
      .where('purpose', '=', 'recover')
      .where('id', '<>', tokenId)
      .where('used_at', '=', expiresAt)
      .executeTakeFirst();
    return other !== undefined;
  }

  async function checkRecoveryToken(token: string, ex: DbOrTrx = db): Promise<RecoveryCheck> {
    if (!token || token.length > 200) return { ok: false, reason: 'This recovery link is not valid.' };
    const row = await ex
      .selectFrom('one_time_tokens as o')
      .innerJoin('accounts as a', 'a.id', 'o.account_id')
      .select(['o.id', 'o.used_at', 'o.expires_at', 'a.id as account_id', 'a.email', 'a.user_ref'])
      .where('o.token_hash', '=', hashSecret(token))
      .where('o.purpose', '=', 'recover')
      .executeTakeFirst();
    if (!row) return { ok: false, reason: 'This recovery link is not valid.' };
    if (row.used_at) return { ok: false, reason: 'This recovery link has already been used.' };
    if (await isSuperseded(ex, row.id, row.account_id, row.expires_at))
      return { ok: false, reason: 'This recovery link no longer works: the account was recovered with another link since.' };
    if (row.expires_at <= clock.now()) return { ok: false, reason: 'This recovery link has expired. Request a new one.' };
    return { ok: true, accountId: row.account_id, email: row.email, userRef: row.user_ref, tokenId: row.id };
  }

  return {
    async register(email: string, name: string) {
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + ONE_TIME_TOKEN_TTL_MS);
      const token = newOneTimeToken();
      return db.transaction().execute(async (trx) => {
        // Insert-or-fetch under the unique e-mail, so two concurrent registrations make one account.
        await trx
          .insertInto('accounts')
          .values({ user_ref: newRef(), email, name, status: 'registered' })
          .onConflict((oc) => oc.column('email').doNothing())
          .execute();
        const account = await trx.selectFrom('accounts').selectAll().where('email', '=', email).forUpdate().executeTakeFirstOrThrow();
        if (account.status === 'initialized') {
          throw new ValidationError({ email: ['The email has already been taken.'] });
        }
        if (account.name !== name) await trx.updateTable('accounts').set({ name }).where('id', '=', account.id).execute();
        // A fresh token replaces any earlier one: only the newest mail works.
        await trx
          .updateTable('one_time_tokens')
          .set({ used_at: now })
          .where('account_id', '=', account.id)
          .where('purpose', '=', 'init')
          .where('used_at', 'is', null)
          .execute();
        await trx
          .insertInto('one_time_tokens')
          .values({ account_id: account.id, purpose: 'init', token_hash: hashSecret(token), expires_at: expiresAt })
          .execute();
        await enqueueMail(trx, {
          kind: 'registration',
          secretExpiresAt: expiresAt,
          to: email,
          subject: 'Your regwatch initialization token',
          text: [
            `Hello ${name},`,
            '',
            'Welcome to regwatch. Exchange this one-time token for your Master Token:',
            '',
            `Initialization token: ${token}`,
            `Expires: ${expiresAt.toISOString()} (24 hours from registration; it works once)`,
            '',
            'For example:',
            `  curl -X POST ${deps.publicBaseUrl}/api/v1/auth/init -H 'Content-Type: application/json' -d '{"token":"${token}"}'`,
            '',
            'The Master Token is shown once. If you lose it, recover the account with POST /api/v1/auth/recover.',
          ].join('\n'),
        });
        return {
          user_ref: account.user_ref,
          email,
          message:
            'Registration received. An initialization token has been sent to your e-mail address; exchange it at POST /api/v1/auth/init within 24 hours.',
          expires_at: expiresAt.toISOString(),
        };
      });
    },

    async init(token: string) {
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        // The account's row first, as register locks it before it ends the account's init tokens:
        // taken in the other order, an init and a register again of the same account deadlocked.
        const owner = await trx
          .selectFrom('one_time_tokens')
          .select('account_id')
          .where('token_hash', '=', hashSecret(token))
          .where('purpose', '=', 'init')
          .executeTakeFirst();
        if (owner) await lockAccountTokens(trx, owner.account_id);
        // Claim the token with a conditional update: of two concurrent inits only one wins.
        const claimed = await trx
          .updateTable('one_time_tokens')
          .set({ used_at: now })
          .where('token_hash', '=', hashSecret(token))
          .where('purpose', '=', 'init')
          .where('used_at', 'is', null)
          .where('expires_at', '>', now)
          .returning(['account_id'])
          .executeTakeFirst();
        if (!claimed) throw new ValidationError({ token: ['The initialization token is invalid, expired or already used.'] });
        const account = await trx
          .updateTable('accounts')
          .set({ status: 'initialized', initialized_at: now })
          .where('id', '=', claimed.account_id)
          .where('status', '=', 'registered')
          .returningAll()
          .executeTakeFirst();
        if (!account) throw new ValidationError({ token: ['The initialization token is invalid, expired or already used.'] });
        const { row, plaintext } = await issueToken(trx, {
          accountId: account.id,
          kind: 'master',
          name: 'Master Token',
          lifetimeDays: null,
          now,
        });
        await createWallet(trx, account.id);
        await applyLedgerEntry(trx, {
          accountId: account.id,
          type: 'start',
          amount: WELCOME_CREDITS,
          description: 'Welcome bonus',
          reference: 'start',
        });
        return {
          user_ref: account.user_ref,
          email: account.email,
          master_token: plaintext,
          token_ref: row.token_ref,
          message: `Account initialized. Store the Master Token now: it is shown only once. ${WELCOME_CREDITS} welcome credits have been added to your wallet.`,
        };
      });
    },

    /**
     * Answers the same, in about the same time, whether or not the account exists: the request
     * only queues a job, and the job decides whether there is anyone to mail.
     */
    async requestRecovery(email: string) {
      const now = clock.now();
      await addJob(db, RECOVER_TASK, { email, requested_at: now.toISOString() }, { maxAttempts: 5 });
      return { message: RECOVERY_MESSAGE, expires_at: new Date(now.getTime() + ONE_TIME_TOKEN_TTL_MS).toISOString() };
    },

    checkRecoveryToken,

    async confirmRecovery(token: string) {
      const check = await checkRecoveryToken(token);
      if (!check.ok) return check;
      return db.transaction().execute(async (trx) => {
        // Token writes of the account wait for this one, and this for them (lockAccountTokens):
        // one issued or rotated meanwhile is revoked below, never left working beside the new Master Token.
        await lockAccountTokens(trx, check.accountId);
        // Checked again under the lock, which every confirmation of the account takes: one that went
        // first (this one waited for it) used or ended this link. Its state says so outright, not
        // the times, so a confirmation whose clock reads earlier than the winner's is refused too.
        const locked = await checkRecoveryToken(token, trx);
        if (!locked.ok) return locked;
        const now = clock.now();
        await trx.updateTable('one_time_tokens').set({ used_at: now }).where('id', '=', check.tokenId).execute();
        // The account's other recovery links end with this one: each would revoke the Master Token just issued.
        // Every unused one, those this clock reads as expired too: a process whose clock is behind
        // would still find them unexpired.
        await trx
          .updateTable('one_time_tokens')
          .set({ expires_at: now })
          .where('account_id', '=', check.accountId)
          .where('purpose', '=', 'recover')
          .where('used_at', 'is', null)
          .execute();
        // Every token of the account stops working at once, the Master Token included.
        await trx
          .updateTable('api_tokens')
          .set({ revoked_at: now })
          .where('account_id', '=', check.accountId)
          .where('revoked_at', 'is', null)
          .execute();
        const { row, plaintext } = await issueToken(trx, {
          accountId: check.accountId,
          kind: 'master',
          name: 'Master Token',
          lifetimeDays: null,
          now,
        });
        return { ok: true as const, user_ref: check.userRef, email: check.email, master_token: plaintext, token_ref: row.token_ref };
      });
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;

/** `auth.recover {email}`: mails a recovery link when an initialised account has that e-mail. */
export function createAccountJobs(deps: AccountsDeps): JobModule {
  const recover: Task = async (payload) => {
    const { email, requested_at } = parseJobPayload(RECOVER_TASK, RecoverAccountPayload, payload);
    const account = await deps.db.selectFrom('accounts').select(['id', 'status', 'name']).where('email', '=', email).executeTakeFirst();
    if (!account || account.status !== 'initialized') return;
    // The link expires when the request's answer said (`expires_at`: the request's time + 24 h),
    // however late the job runs; one whose time has passed is not worth a mail.
    const asked = requested_at === undefined ? Number.NaN : Date.parse(requested_at);
    const requestedAt = Number.isNaN(asked) ? deps.clock.now() : new Date(asked);
    const expiresAt = new Date(requestedAt.getTime() + ONE_TIME_TOKEN_TTL_MS);
    if (expiresAt <= deps.clock.now()) return;
    const token = newOneTimeToken();
    const link = recoveryLink(deps.publicBaseUrl, token);
    await deps.db.transaction().execute(async (trx) => {
      // A recovery confirmed since the request ended every link of the account then (confirmRecovery):
      // a link asked for before it, its job late, would revoke the Master Token that recovery showed.
      // (A request in the confirmation's very millisecond still gets its link, as before.)
      await lockAccountTokens(trx, account.id);
      const recoveredSince = await trx
        .selectFrom('one_time_tokens')
        .select('id')
        .where('account_id', '=', account.id)
        .where('purpose', '=', 'recover')
        .where('used_at', '>', requestedAt)
        .executeTakeFirst();
      if (recoveredSince) return;
      await trx
        .insertInto('one_time_tokens')
        .values({ account_id: account.id, purpose: 'recover', token_hash: hashSecret(token), expires_at: expiresAt })
        .execute();
      await enqueueMail(trx, {
        kind: 'recovery',
        secretExpiresAt: expiresAt,
        to: email,
        subject: 'Recover your regwatch account',
        text: [
          `Hello ${account.name},`,
          '',
          'Someone (hopefully you) asked to recover this regwatch account. Open the link and press the button to get a new Master Token:',
          '',
          `Confirm: ${link}`,
          '',
          `The link works once, until ${expiresAt.toISOString()}.`,
          'Confirming revokes every existing token of the account at once (the Master Token and all API tokens): integrations using them stop working.',
          '',
          'If you did not ask for this, ignore this e-mail; nothing changes.',
        ].join('\n'),
      });
    });
  };
  return { tasks: { [RECOVER_TASK]: recover } };
}
