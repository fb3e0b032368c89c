import type { Db } from '../../db/database.ts';
import { pageMeta, type PageMeta } from '../../lib/pagination.ts';
import { NotFoundError, TemporarilyUnavailableError, ValidationError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseIdentifier } from '../../lib/identifiers.ts';
import { ImportUnavailableError, type ImportCompany } from '../../registry/import.ts';
import type { IdentifierType } from '../../registry/model.ts';
import { parseEventFilters, type EventFilterQuery } from './event-filters.ts';
import {
  countCompanyEvents,
  countFeed,
  findCompanyRef,
  inSnapshot,
  isLockTimeout,
  listCompanyEventsPage,
  listFeedAfter,
  listFeedPage,
  type EventRow,
  type FeedEventRow,
} from './repo.ts';

export interface FeedQuery extends EventFilterQuery {
  page: number;
  per_page: number;
  after_id?: number;
}

export type EventPageMeta = PageMeta & { fetched_at: string };

export interface CursorMeta {
  per_page: number;
  after_id: number;
  /** Pass as `after_id` next time: the last id returned, or `after_id` itself when none was. */
  next_after_id: number;
  has_more: boolean;
  fetched_at: string;
}

export interface CompanyEventsQuery extends EventFilterQuery {
  identifier_type: IdentifierType;
  identifier_value: string;
  page: number;
  per_page: number;
}

export interface EventsService {
  feed(accountId: string, q: FeedQuery): Promise<{ data: FeedEventRow[]; meta: EventPageMeta | CursorMeta }>;
  companyEvents(q: CompanyEventsQuery): Promise<{
    data: { company: { primary_identifier: string; identifier_type: IdentifierType; name: string }; events: EventRow[] };
    meta: EventPageMeta;
  }>;
}

/** The checks of a company's events query (422): its identifier (normalised), then its filters. */
export function parseCompanyEventsQuery(q: EventFilterQuery & { identifier_type: IdentifierType; identifier_value: string }) {
  const parsed = parseIdentifier(q.identifier_type, q.identifier_value);
  if (!parsed.ok) throw new ValidationError({ identifier_value: [parsed.error] });
  return { identifier: { type: q.identifier_type, value: parsed.value }, filters: parseEventFilters(q) };
}

function eventPageMeta(total: number, page: number, perPage: number, fetchedAt: Date): EventPageMeta {
  return { ...pageMeta(total, page, perPage), fetched_at: fetchedAt.toISOString() };
}

export function createEventsService(deps: { db: Db; clock: Clock; importCompany: ImportCompany }): EventsService {
  const { db, clock } = deps;
  return {
    /**
     * Page mode: newest first, page-numbered. `after_id` mode (extension): the events with a
     * greater id, oldest first; a client that keeps `next_after_id` sees every event once.
     */
    async feed(accountId, q) {
      const filters = parseEventFilters(q);
      const fetchedAt = clock.now();
      if (q.after_id !== undefined) {
        const rows = await listFeedAfter(db, accountId, filters, q.after_id, q.per_page + 1).catch((e: unknown) => {
          if (isLockTimeout(e)) throw new TemporarilyUnavailableError('The feed is being written right now; poll again in a moment.');
          throw e;
        });
        const hasMore = rows.length > q.per_page;
        const data = hasMore ? rows.slice(0, q.per_page) : rows;
        return {
          data,
          meta: {
            per_page: q.per_page,
            after_id: q.after_id,
            next_after_id: data.length > 0 ? data[data.length - 1]!.id : q.after_id,
            has_more: hasMore,
            fetched_at: fetchedAt.toISOString(),
          },
        };
      }
      const { total, data } = await inSnapshot(db, async (trx) => {
        const n = await countFeed(trx, accountId, filters);
        return { total: n, data: await listFeedPage(trx, accountId, filters, q.per_page, (q.page - 1) * q.per_page, n) };
      });
      return { data, meta: eventPageMeta(total, q.page, q.per_page, fetchedAt) };
    },

    /** All of a known company's events, watched or not; unknown after the on-demand import: 404. */
    async companyEvents(q) {
      const { identifier, filters } = parseCompanyEventsQuery(q);
      let company = await findCompanyRef(db, identifier.type, identifier.value);
      if (!company) {
        const imported = await deps.importCompany(identifier).catch((e: unknown) => {
          if (e instanceof ImportUnavailableError)
            throw new TemporarilyUnavailableError('The registries could not be reached to look the company up. Try again later.');
          throw e;
        });
        if (imported.found) company = await findCompanyRef(db, identifier.type, identifier.value);
      }
      if (!company) throw new NotFoundError('Company not found');
      const fetchedAt = clock.now();
      const companyId = company.id;
      const { total, events } = await inSnapshot(db, async (trx) => ({
        total: await countCompanyEvents(trx, companyId, filters),
        events: await listCompanyEventsPage(trx, companyId, filters, q.per_page, (q.page - 1) * q.per_page),
      }));
      return {
        data: {
          company: { primary_identifier: company.primary_identifier, identifier_type: company.primary_identifier_type, name: company.name },
          events,
        },
        meta: eventPageMeta(total, q.page, q.per_page, fetchedAt),
      };
    },
  };
}
