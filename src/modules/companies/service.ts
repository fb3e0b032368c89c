import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.ts';
import { pageMeta } from '../../lib/pagination.ts';
import type { Log } from '../../logger.ts';
import {
  InsufficientCreditsError,
  NotFoundError,
  TemporarilyUnavailableError,
  UnauthorizedError,
  ValidationError,
} from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseIdentifier } from '../../lib/identifiers.ts';
import { ImportUnavailableError, type ImportCompany } from '../../registry/import.ts';
import type { CompanySnapshot, Contact, Identifier, IdentifierType } from '../../registry/model.ts';
import { byDisplayOrder } from '../../registry/sources/display-order.ts';
import { findCompanyByIdentifier, type RegistryExecutor, type StoredCompany } from '../../registry/store.ts';
import { isTokenActive } from '../tokens/authenticate.ts';
import { chargeOutcome, priceOf, readBalance, refundCredits, type ChargeArgs, type ChargeAttempt } from '../wallet/credits.ts';
import {
  MAX_SEARCH_PAGE,
  MAX_SEARCH_RESULTS,
  parseSearchQuery,
  SEARCH_PAGE_SIZE,
  type SearchFilters,
  type SearchQuery,
} from './filters.ts';
import { unionOfAsked } from './index-follower.ts';
import { createTurnBatcher } from '../../lib/turn-batcher.ts';
import {
  findCompaniesCharging,
  findCompanyCharging,
  findResultPagesCharging,
  findResultRows,
  readDataAsOf,
  type ChargedPage,
  type ChargedRead,
  type PageEntry,
  type ResultRow,
  type RunProgress,
  type RunsAsked,
} from './repo.ts';
import type { CompanySearchEngine, SearchAnswer } from './search-engine.ts';

/** Who pays for a snapshot: the request's account and the token it presented. */
export interface Payer {
  accountId: string;
  tokenId: string;
  expiresAt: Date | null;
}

export interface CompaniesServiceDeps {
  db: RegistryExecutor;
  config: Config;
  logger: Log;
  clock: Clock;
  search: CompanySearchEngine;
  /** The on-demand import from the live registries (src/registry/import.ts). */
  importCompany: ImportCompany;
}

export interface SearchResult {
  identifiers: { type: IdentifierType; value: string }[];
  name: string;
  city: string | null;
  voivodeship: string | null;
  activity_start: string | null;
  activity_main: string | null;
  status: 'ACTIVE' | 'SUSPENDED' | 'DELETED';
  contacts: Contact[];
}

/** A search result from a stored company: the address that drives the search columns, contacts of every profile. */
export function searchResultOf(row: ResultRow): SearchResult {
  const snapshot: CompanySnapshot = row.snapshot;
  const profiles = byDisplayOrder(snapshot.profiles ?? []);
  const address = profiles.find((p) => p.address && (p.address.city || p.address.postal_code))?.address ?? null;
  const seen = new Set<string>();
  const contacts: Contact[] = [];
  for (const p of profiles) {
    for (const c of p.contacts ?? []) {
      const key = `${c.type}\n${c.value}`;
      if (!c.value || seen.has(key)) continue;
      seen.add(key);
      contacts.push({ type: c.type, value: c.value });
    }
  }
  return {
    identifiers: (snapshot.identity?.identifiers ?? []).map((i) => ({ type: i.type, value: i.value })),
    name: row.name,
    city: address?.city || null,
    voivodeship: address?.voivodeship || null,
    activity_start: row.activity_start,
    activity_main: row.main_activity,
    status: row.status,
    contacts,
  };
}

function parseOrThrow(type: IdentifierType, rawValue: string): Identifier {
  const parsed = parseIdentifier(type, rawValue);
  if (!parsed.ok) throw new ValidationError({ identifier_value: [parsed.error] });
  return { type, value: parsed.value };
}

function snapshotBody(company: StoredCompany, now: Date, dataAsOf: string | null) {
  return {
    status: 'success' as const,
    data: company.snapshot,
    meta: {
      fetched_at: now.toISOString(),
      data_as_of: dataAsOf,
      first_seen_date: company.first_seen_date,
      last_changed_date: company.last_changed_date,
    },
  };
}

/**
 * Statements of batched paid reads (snapshots, search pages) one API process runs at once, per
 * kind: enough to keep both of PostgreSQL's cores busy, few enough that the reads of a busy
 * moment share one commit.
 */
const BATCHES_IN_FLIGHT = 3;

/**
 * Search results kept by company and revision, as their JSON text (a few hundred bytes each): a
 * page's statement then returns only the companies whose revision changed, and none of the 20
 * snapshots (about 26 KB of JSON a page) is sent, parsed or serialized again while its company is
 * unchanged.
 */
const RESULTS_KEPT = 50_000;

/** A deadlock or a serialization failure: the batch took nothing, and its items may be tried again. */
const isRetryable = (e: unknown) => {
  const code = (e as { code?: string }).code;
  return code === '40P01' || code === '40001';
};

const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}}');

/**
 * searchBody as UTF-8 JSON, from the results' own UTF-8 JSON (held with them: a page of held
 * results is neither serialized nor encoded again). The same document the route's response schema
 * would write. A Buffer, not a string: joining 20 results of Polish text made a two-byte string
 * that the response then measured (content-length) and encoded again (in a `--cpu-prof` profile
 * under load, the joining 4.5 % of the API's busy time and the measuring 2.5 %).
 */
function searchPayload(answer: SearchAnswer, page: number, results: readonly Buffer[]): Buffer {
  const head = JSON.stringify({
    status: 'success',
    data: { ...pageMeta(answer.total, page, SEARCH_PAGE_SIZE), data_as_of: answer.dataAsOf },
  });
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -2)},"results":[`)];
  results.forEach((r, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(r);
  });
  parts.push(TAIL);
  return Buffer.concat(parts);
}

/**
 * A search result as the UTF-8 JSON it is written as, in memory of its own: a slice of Node's
 * shared 8 KB pool would keep the whole slab alive as long as the result is held.
 */
function resultJson(row: ResultRow): Buffer {
  const text = JSON.stringify(searchResultOf(row));
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  out.write(text);
  return out;
}

function searchBody(answer: SearchAnswer, page: number, results: SearchResult[]) {
  return {
    status: 'success' as const,
    data: { ...pageMeta(answer.total, page, SEARCH_PAGE_SIZE), data_as_of: answer.dataAsOf, results },
  };
}

/**
 * The rows a page asks the engine for. A page beyond MAX_SEARCH_PAGE asks for none (its total
 * only): it is either past the last page (an empty page, as any page past the last) or refused
 * (checkDeepPage), and a walk to its offset is what the limit exists to avoid.
 */
function pageWindow(page: number): { offset: number; limit: number } {
  return page > MAX_SEARCH_PAGE ? { offset: 0, limit: 0 } : { offset: (page - 1) * SEARCH_PAGE_SIZE, limit: SEARCH_PAGE_SIZE };
}

/** A page beyond MAX_SEARCH_PAGE that holds results: 422 on `page` (docs/search.md, "Pages"). */
function checkDeepPage(answer: SearchAnswer, page: number): SearchAnswer {
  if (page > MAX_SEARCH_PAGE && answer.total > (page - 1) * SEARCH_PAGE_SIZE)
    throw new ValidationError({
      page: [
        `The page field must not be greater than ${MAX_SEARCH_PAGE} while there are results beyond it: the first ${MAX_SEARCH_RESULTS.toLocaleString('en')} results are served; narrow the filters to see further.`,
      ],
    });
  return answer;
}

export function createCompaniesService(deps: CompaniesServiceDeps) {
  const { db, clock } = deps;

  /** The engine's answer to a search (the ids of its page), after its own follow check. */
  const answerOf = async (filters: SearchFilters, page: number): Promise<SearchAnswer> => {
    try {
      const w = pageWindow(page);
      return await deps.search.search(filters, w.offset, w.limit);
    } catch (e) {
      // Only the SQL path can time out: a wide search while this process builds its index.
      if ((e as { code?: string }).code === '57014')
        throw new TemporarilyUnavailableError('The search index is being built; this search took too long. Try again in a minute.');
      throw e;
    }
  };

  /**
   * A turn batcher of paid reads: `batch` charges all of a turn's items in one statement; a
   * deadlock or serialization failure rolls that statement back whole, and the items are then
   * charged one by one with `one`.
   */
  const chargingBatcher = <I, O>(what: string, batch: (items: I[]) => Promise<O[]>, one: (item: I) => Promise<O>) =>
    createTurnBatcher(
      async (items: I[]) => {
        try {
          return await batch(items);
        } catch (e) {
          if (!isRetryable(e)) throw e;
          deps.logger.warn({ err: e, items: items.length }, `batched ${what} charge failed; charging one by one`);
          return Promise.all(items.map(one));
        }
      },
      { maxInFlight: BATCHES_IN_FLIGHT },
    );

  /** `find`, and when it finds nothing, an on-demand import (after `beforeImport`) and `find` again. */
  const findOrImport = async <T>(identifier: Identifier, find: () => Promise<T | null>, beforeImport?: () => Promise<void>): Promise<T> => {
    const found = await find();
    if (found) return found;
    await beforeImport?.();
    let imported;
    try {
      imported = await deps.importCompany(identifier);
    } catch (e) {
      if (e instanceof ImportUnavailableError)
        throw new TemporarilyUnavailableError('The company registry could not be reached. Try again later.');
      throw e;
    }
    const again = imported.found ? await find() : null;
    if (!again) throw new NotFoundError('Company not found');
    return again;
  };

  /** One paid read on its own (its own statement; a second read when its charge was refused). */
  const readCharging = async (r: ChargedRead) => {
    const one = await findCompanyCharging(db, r.identifier, r.charge);
    return one && { company: one.company, dataAsOf: one.dataAsOf, attempt: await chargeOutcome(db, r.charge, one.balanceAfter) };
  };
  /**
   * Paid reads that arrive within one event-loop turn go to PostgreSQL as one statement
   * (findCompaniesCharging: one round trip and one commit for all of them). A deadlock with a
   * transaction that locks wallets in another order (batches lock in account order) fails the
   * whole statement, which took nothing: its reads are then made one by one. At most
   * BATCHES_IN_FLIGHT statements run at once; reads arriving meanwhile join the next one.
   */
  const readBatched = chargingBatcher('snapshot', (reads: ChargedRead[]) => findCompaniesCharging(db, reads), readCharging);
  /**
   * The pages of the searches of one event-loop turn, read with their charges in one statement
   * (findResultPagesCharging), as readBatched does for snapshots; after a deadlock, one by one
   * (a statement of one search locks one wallet).
   */
  type Kept = { revision: number; json: Buffer };
  const results = new Map<string, Kept>();
  /**
   * A paid page's results from its entries and the results `held` when it was asked for (held,
   * not looked up again: another page may have replaced or dropped them meanwhile). New data is
   * kept for the next page that shows the company.
   */
  const resultsOf = (entries: readonly PageEntry[], held: ReadonlyMap<string, Kept>): Buffer[] =>
    entries.map((e) => {
      if (e.row === null) {
        const kept = held.get(e.id);
        if (kept === undefined || kept.revision !== e.revision) throw new Error(`search result ${e.id}@${e.revision} not held`);
        return kept.json;
      }
      const json = resultJson(e.row);
      const kept = results.get(e.id);
      if (kept !== undefined && kept.revision > e.revision) return json; // a page read later saw a newer revision
      if (kept === undefined && results.size >= RESULTS_KEPT) results.delete(results.keys().next().value!);
      results.set(e.id, { revision: e.revision, json });
      return json;
    });
  /**
   * The batch's statement also runs the follow check of every page answered from the index (one
   * question for all: unionOfAsked), in its snapshot, which starts after all of them arrived.
   */
  type FollowedPage = ChargedPage & { asked: RunsAsked | null };
  const pagesWithRuns = async (pages: FollowedPage[]) => {
    const asked = unionOfAsked(pages.flatMap((p) => (p.asked === null ? [] : [p.asked])));
    const out = await findResultPagesCharging(db, pages, asked);
    return out.pages.map((p): { entries: PageEntry[]; attempt: ChargeAttempt; runs: RunProgress[] } => ({ ...p, runs: out.runs }));
  };
  const pageBatched = chargingBatcher('search', pagesWithRuns, async (p: FollowedPage) => (await pagesWithRuns([p]))[0]!);

  return {
    /**
     * The stored snapshot of the company with this identifier, importing it from the live
     * sources first when it is unknown. 422 for an invalid identifier, 404 when no source knows it,
     * 503 when a source that might know it could not be asked. Charges nothing (callers that sell
     * it charge through src/modules/wallet/credits.ts, or use paidSnapshot).
     */
    async snapshot(type: IdentifierType, rawValue: string) {
      const identifier = parseOrThrow(type, rawValue);
      const company = await findOrImport(identifier, () => findCompanyByIdentifier(db, identifier));
      // Read after the company: it reflects at least that day's run.
      return snapshotBody(company, clock.now(), await readDataAsOf(db));
    },

    /**
     * The snapshot, charged to `payer` in the same statement that reads it (one round trip; the
     * charge also checks that the token is still usable). An unknown company is imported only when
     * the balance covers the price. Besides snapshot's errors: 402 too few credits, 401 a token
     * revoked or expired meanwhile. Nothing is charged unless the snapshot is answered.
     */
    async paidSnapshot(type: IdentifierType, rawValue: string, payer: Payer & { cached?: boolean }) {
      const identifier = parseOrThrow(type, rawValue);
      const now = clock.now();
      // A free snapshot has no charge to check the token in its statement: a principal from the
      // token cache is checked here, as a free search's is (a revocation takes effect at once).
      if (priceOf(deps.config.prices, 'companies.snapshot') === 0 && payer.cached && !(await isTokenActive(db, payer.tokenId, now)))
        throw new UnauthorizedError(payer.expiresAt && payer.expiresAt <= now ? 'Token expired' : 'Token revoked');
      const charge: ChargeArgs = {
        accountId: payer.accountId,
        operation: 'companies.snapshot',
        prices: deps.config.prices,
        ifTokenActive: { tokenId: payer.tokenId, now },
      };
      const priced = priceOf(deps.config.prices, 'companies.snapshot') > 0;
      const found = await findOrImport(
        identifier,
        () => (priced ? readBatched({ identifier, charge }) : readCharging({ identifier, charge })),
        async () => {
          // An import costs a live lookup: not for a token revoked a moment ago (the cache may not know yet).
          if (!(await isTokenActive(db, payer.tokenId, now)))
            throw new UnauthorizedError(payer.expiresAt && payer.expiresAt <= now ? 'Token expired' : 'Token revoked');
          const required = priceOf(deps.config.prices, 'companies.snapshot');
          const balance = required > 0 ? await readBalance(db, payer.accountId) : 0;
          if (balance < required) throw new InsufficientCreditsError(balance, required);
        },
      );
      const outcome = found.attempt;
      if (!outcome.taken && outcome.reason === 'inactive-token')
        throw new UnauthorizedError(payer.expiresAt && payer.expiresAt <= now ? 'Token expired' : 'Token revoked');
      if (!outcome.taken) throw new InsufficientCreditsError(outcome.balance, outcome.required);
      return { charged: outcome.charged, balanceAfter: outcome.balanceAfter, body: snapshotBody(found.company, now, found.dataAsOf) };
    },

    /**
     * A page of results, charging nothing (callers that sell it charge through
     * src/modules/wallet/credits.ts, or use paidSearch). 422 for invalid filters, 503 when a SQL
     * search (while the index is built) times out.
     */
    async search(query: SearchQuery) {
      const { filters, page } = parseSearchQuery(query);
      const answer = checkDeepPage(await answerOf(filters, page), page);
      return searchBody(answer, page, (await findResultRows(db, answer.ids)).map(searchResultOf));
    },

    /**
     * search, charged to `payer` in the statement that reads the page's companies, together with
     * the pages of the other searches of the same moment (one round trip and one commit for all of
     * them; the charge also checks that the token is still usable). Besides search's errors
     * (nothing charged): 402 too few credits, 401 a token revoked or expired meanwhile (for a free
     * search, checked again when `payer` came from the token cache).
     */
    async paidSearch(query: SearchQuery, payer: Payer & { cached: boolean }) {
      const { filters, page } = parseSearchQuery(query);
      const priced = priceOf(deps.config.prices, 'companies.search') > 0;
      // Priced: answered at once, its follow check made by the page's statement (confirm, below).
      const w = pageWindow(page);
      const unchecked = priced ? deps.search.answerUnchecked(filters, w.offset, w.limit) : null;
      const answer = checkDeepPage(unchecked?.answer ?? (await answerOf(filters, page)), page);
      const now = clock.now();
      const inactive = () => new UnauthorizedError(payer.expiresAt && payer.expiresAt <= now ? 'Token expired' : 'Token revoked');
      if (!priced) {
        if (payer.cached && !(await isTokenActive(db, payer.tokenId, now))) throw inactive();
        const rows = await findResultRows(db, answer.ids);
        return {
          charged: 0,
          balanceAfter: null,
          body: searchPayload(answer, page, rows.map(resultJson)),
        };
      }
      const charge: ChargeArgs = {
        accountId: payer.accountId,
        operation: 'companies.search',
        prices: deps.config.prices,
        ifTokenActive: { tokenId: payer.tokenId, now },
      };
      const held = new Map<string, Kept>();
      const known = answer.ids.map((id) => {
        const kept = results.get(id);
        if (kept === undefined) return 0;
        held.set(id, kept);
        return kept.revision;
      });
      const { entries, attempt, runs } = await pageBatched({ ids: answer.ids, known, charge, asked: unchecked?.asked ?? null });
      if (!attempt.taken && attempt.reason === 'inactive-token') throw inactive();
      if (!attempt.taken) throw new InsufficientCreditsError(attempt.balance, attempt.required);
      // A run finished since the index's cursor (rare): the answer after following it, its page
      // read again (the charge taken stands: the search succeeds).
      let followed: SearchAnswer | null = null;
      let rows: ResultRow[] = [];
      try {
        followed = unchecked && (await deps.search.confirm(unchecked, runs));
        if (followed) rows = await findResultRows(db, followed.ids);
      } catch (e) {
        // The search fails after its credit was taken (following the runs failed: the database):
        // give it back, so that a failed search costs nothing, as when it failed before the charge.
        await refundCredits(db, {
          accountId: payer.accountId,
          operation: 'companies.search',
          credits: attempt.charged,
          reference: `companies.search:${randomUUID()}`,
          description: 'companies.search refund: the search failed after its charge',
        }).catch((r: unknown) => deps.logger.error({ err: r, account_id: payer.accountId }, 'search refund failed'));
        throw e;
      }
      if (followed) {
        return { charged: attempt.charged, balanceAfter: attempt.balanceAfter, body: searchPayload(followed, page, rows.map(resultJson)) };
      }
      return { charged: attempt.charged, balanceAfter: attempt.balanceAfter, body: searchPayload(answer, page, resultsOf(entries, held)) };
    },
  };
}

export type CompaniesService = ReturnType<typeof createCompaniesService>;
