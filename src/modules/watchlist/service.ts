import type { Config } from '../../config.ts';
import { pageMeta, type PageMeta } from '../../lib/pagination.ts';
import type { Db } from '../../db/database.ts';
import { NotFoundError } from '../../lib/errors.ts';
import { chargeCredits, priceOf, refundCredits } from '../wallet/credits.ts';
import type { Clock } from '../../lib/clock.ts';
import { newRef } from '../../lib/ids.ts';
import { addJob } from '../../jobs/queue.ts';
import { TASKS } from '../../jobs/tasks.ts';
import type { IdentifierType } from '../../registry/model.ts';
import { enqueueMail } from '../mail/outbox.ts';
import type { IdentifierList } from './identifier-list.ts';
import { composeWatchlistMail } from './mail.ts';
import {
  accountEmail,
  cancelQueuedItems,
  completeRequest,
  countWatched,
  findActiveWatches,
  findCompanyIds,
  findQueuedValues,
  findRequestById,
  findRequestByRef,
  insertRequest,
  listRequestItems,
  listWatched,
  lockAccountWatchlist,
  unwatchCompanies,
  type Executor,
  type NewRequestItem,
  type WatchedRow,
  type WatchRequestRow,
} from './repo.ts';
import type { WatchItemStatus, WatchRequestStatus } from './tables.ts';

export const WATCH_ADD_TASK = TASKS.watchlistAdd;

/** graphile-worker retries a failing add with exponential backoff: about nine hours in all. */
export const WATCH_ADD_MAX_ATTEMPTS = 10;

export function watchAddJobKey(requestRef: string): string {
  return `watchlist.add:${requestRef}`;
}

export function chargeReference(requestRef: string): string {
  return `companies.add:${requestRef}`;
}

export function refundReference(requestRef: string): string {
  return `companies.add.refund:${requestRef}`;
}

export interface AddOutcome {
  request_id: string;
  identifier_type: IdentifierType;
  submitted: number;
  duplicates: number;
  queued: number;
  already_watched: number;
  already_queued: number;
  credits_charged: number;
}

/** The `message` of an add's answer (the REST body and the MCP tool's). */
export function addMessage(o: AddOutcome): string {
  const parts = [`${o.queued} identifier${o.queued === 1 ? '' : 's'} queued for monitoring`];
  if (o.already_watched > 0) parts.push(`${o.already_watched} already watched`);
  if (o.already_queued > 0) parts.push(`${o.already_queued} already queued by an earlier request`);
  return `${parts.join('; ')}. A confirmation e-mail follows once every company is ready.`;
}

/** What an add would do now: the counts of AddOutcome and the credits it would take (docs/mcp.md, `dry_run`). */
export interface AddQuote extends Omit<AddOutcome, 'request_id' | 'credits_charged'> {
  credits: number;
}

export interface RemoveOutcome {
  removed: string[];
  not_found: string[];
  not_watched: string[];
  removed_at: string;
}

export interface RequestView {
  request_id: string;
  status: WatchRequestStatus;
  identifier_type: IdentifierType;
  submitted: number;
  queued: number;
  credits_charged: number;
  credits_refunded: number;
  created_at: string;
  completed_at: string | null;
  items: { identifier_value: string; status: WatchItemStatus; primary_identifier: string | null; name: string | null }[];
}

/** What `add` did, and the balance its charge left (null when it charged nothing): the REST answer's credit headers. */
export type AddTaken = AddOutcome & { balanceAfter: number | null };

export interface WatchlistService {
  add(accountId: string, list: IdentifierList): Promise<AddTaken>;
  /** What `add` would queue and charge right now, without writing anything (an add racing it may change the answer). */
  quoteAdd(accountId: string, list: IdentifierList): Promise<AddQuote>;
  remove(accountId: string, list: IdentifierList): Promise<RemoveOutcome>;
  listWatched(accountId: string, page: number, perPage: number): Promise<{ data: WatchedRow[]; meta: PageMeta }>;
  getRequest(accountId: string, requestRef: string): Promise<RequestView>;
}

export function createWatchlistService(deps: { db: Db; config: Config; clock: Clock }): WatchlistService {
  const { db, config, clock } = deps;
  return {
    /**
     * Takes the request in one transaction: the request and its items, the charge for the values
     * newly queued, and the job that settles them commit together, or (402) none of them does.
     */
    async add(accountId, list) {
      const ref = newRef();
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        // Two adds of one account at once must not both charge for the same value.
        await lockAccountWatchlist(trx, accountId);
        const items = await classifyAddItems(trx, accountId, list);
        const queued = items.filter((i) => i.charged).length;
        const { charged, balanceAfter } = await chargeCredits(trx, {
          accountId,
          operation: 'companies.add',
          units: queued,
          prices: config.prices,
          reference: chargeReference(ref),
        });
        const requestId = await insertRequest(
          trx,
          { ref, accountId, type: list.type, submitted: list.submitted, queued, charged, createdAt: now },
          items,
        );
        await addJob(trx, WATCH_ADD_TASK, { request_id: requestId }, { jobKey: watchAddJobKey(ref), maxAttempts: WATCH_ADD_MAX_ATTEMPTS });
        return { request_id: ref, ...addCounts(list, items), credits_charged: charged, balanceAfter };
      });
    },

    async quoteAdd(accountId, list) {
      const counts = addCounts(list, await classifyAddItems(db, accountId, list));
      return { ...counts, credits: priceOf(config.prices, 'companies.add', counts.queued) };
    },

    /**
     * Stops watching, and cancels what is still queued: a value an add request has not settled
     * yet is `removed` too, and will not be watched (docs/watchlist.md). Serialised with the
     * account's adds by the same lock, so an add and a removal of one value apply in one order.
     */
    async remove(accountId, list) {
      const at = clock.now();
      return db.transaction().execute(async (trx) => {
        await lockAccountWatchlist(trx, accountId);
        const known = await findCompanyIds(trx, list.type, list.values);
        const companyIds = [...new Set(known.values())];
        // Cancelled before the unwatch: should the job be watching one of these right now, this
        // waits for it and the unwatch below then sees its watch (repo.ts claimQueuedItems).
        const cancelled = await cancelQueuedItems(trx, accountId, list.type, list.values, companyIds, at);
        const stopped = await unwatchCompanies(trx, accountId, companyIds, at);
        const cancelledValues = new Set(cancelled.filter((c) => c.identifierType === list.type).map((c) => c.identifierValue));
        const cancelledCompanies = new Set(cancelled.map((c) => c.companyId).filter((id) => id !== null));
        const out: RemoveOutcome = { removed: [], not_found: [], not_watched: [], removed_at: at.toISOString() };
        for (const value of list.values) {
          const companyId = known.get(value);
          if (cancelledValues.has(value) || (companyId !== undefined && (stopped.has(companyId) || cancelledCompanies.has(companyId))))
            out.removed.push(value);
          else if (companyId === undefined) out.not_found.push(value);
          else out.not_watched.push(value);
        }
        // A request left with nothing queued completes now (refund and mail) rather than when
        // its job next runs, which may be hours away while a registry is down.
        for (const requestId of new Set(cancelled.map((c) => c.requestId))) {
          const request = await findRequestById(trx, requestId);
          if (request) await completeSettledRequest(trx, request, at);
        }
        return out;
      });
    },

    async listWatched(accountId, page, perPage) {
      const [total, data] = await Promise.all([countWatched(db, accountId), listWatched(db, accountId, perPage, (page - 1) * perPage)]);
      return { data, meta: pageMeta(total, page, perPage) };
    },

    async getRequest(accountId, requestRef) {
      const r = await findRequestByRef(db, accountId, requestRef);
      if (!r) throw new NotFoundError('Watchlist request not found');
      const items = await listRequestItems(db, r.id);
      return {
        request_id: r.request_ref,
        status: r.status,
        identifier_type: r.identifier_type,
        submitted: r.submitted_count,
        queued: r.queued_count,
        credits_charged: r.charged_credits,
        credits_refunded: r.refunded_credits,
        created_at: r.created_at.toISOString(),
        completed_at: r.completed_at?.toISOString() ?? null,
        items: items.map((i) => ({
          identifier_value: i.identifier_value,
          status: i.status,
          primary_identifier: i.primary_identifier,
          name: i.company_name,
        })),
      };
    },
  };
}

/** Each value's fate in an add: already watched, already queued by an earlier request, or newly queued (charged). */
async function classifyAddItems(db: Executor, accountId: string, list: IdentifierList): Promise<NewRequestItem[]> {
  const known = await findCompanyIds(db, list.type, list.values);
  const watched = await findActiveWatches(db, accountId, [...known.values()]);
  const queuedBefore = await findQueuedValues(db, accountId, list.type, list.values);
  return list.values.map((value) => {
    const companyId = known.get(value) ?? null;
    if (companyId !== null && watched.has(companyId)) return { value, status: 'already_watched', charged: false, companyId };
    if (queuedBefore.has(value)) return { value, status: 'already_queued', charged: false, companyId };
    return { value, status: 'queued', charged: true, companyId: null };
  });
}

function addCounts(list: IdentifierList, items: readonly NewRequestItem[]): Omit<AddQuote, 'credits'> {
  return {
    identifier_type: list.type,
    submitted: list.submitted,
    duplicates: list.submitted - list.values.length,
    queued: items.filter((i) => i.charged).length,
    already_watched: items.filter((i) => i.status === 'already_watched').length,
    already_queued: items.filter((i) => i.status === 'already_queued').length,
  };
}

/**
 * Completes a request none of whose items is queued any more, in the caller's transaction: marks
 * it completed, refunds what each charged item that did not end `watched` was charged (idempotent
 * by reference) and queues the confirmation mail. Exactly once: false when items are still queued or
 * another transaction completed it first.
 */
export async function completeSettledRequest(trx: Executor, request: WatchRequestRow, at: Date): Promise<boolean> {
  const done = await completeRequest(trx, request.id, at);
  if (!done) return false;
  if (done.refundCredits > 0) {
    await refundCredits(trx, {
      accountId: request.account_id,
      operation: 'companies.add',
      credits: done.refundCredits,
      reference: refundReference(request.request_ref),
      description: `companies.add refund: ${done.refundUnits} identifier${done.refundUnits === 1 ? '' : 's'} not watched (request ${request.request_ref})`,
    });
  }
  const email = await accountEmail(trx, request.account_id);
  if (email) {
    const items = await listRequestItems(trx, request.id);
    const mail = composeWatchlistMail({
      requestRef: request.request_ref,
      type: request.identifier_type,
      items,
      refunded: done.refundCredits,
    });
    await enqueueMail(trx, { kind: 'watchlist', to: email, subject: mail.subject, text: mail.text });
  }
  return true;
}
