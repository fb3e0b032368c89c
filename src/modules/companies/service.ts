import type { Config } from '../../config.ts';
import { pageMeta } from '../../lib/pagination.ts';
import type { Log } from '../../logger.ts';
import { NotFoundError, TemporarilyUnavailableError, ValidationError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { parseIdentifier } from '../../lib/identifiers.ts';
import { ImportUnavailableError, type ImportCompany } from '../../registry/import.ts';
import type { CompanySnapshot, Contact, IdentifierType } from '../../registry/model.ts';
import { byDisplayOrder } from '../../registry/sources/display-order.ts';
import { findCompanyByIdentifier, type RegistryExecutor } from '../../registry/store.ts';
import { parseSearchQuery, SEARCH_PAGE_SIZE, type SearchQuery } from './filters.ts';
import { findResultRows, readDataAsOf, type ResultRow } from './repo.ts';
import type { CompanySearchEngine } from './search-engine.ts';

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

export function createCompaniesService(deps: CompaniesServiceDeps) {
  const { db, clock } = deps;

  return {
    /**
     * The stored snapshot of the company with this identifier, importing it from the live
     * sources first when it is unknown. 422 for an invalid identifier, 404 when no source knows it,
     * 503 when a source that might know it could not be asked.
     */
    async snapshot(type: IdentifierType, rawValue: string) {
      const parsed = parseIdentifier(type, rawValue);
      if (!parsed.ok) throw new ValidationError({ identifier_value: [parsed.error] });
      const identifier = { type, value: parsed.value };
      let company = await findCompanyByIdentifier(db, identifier);
      if (!company) {
        let imported;
        try {
          imported = await deps.importCompany(identifier);
        } catch (e) {
          if (e instanceof ImportUnavailableError) throw new TemporarilyUnavailableError('The company registry could not be reached. Try again later.');
          throw e;
        }
        if (imported.found) company = await findCompanyByIdentifier(db, identifier);
        if (!company) throw new NotFoundError('Company not found');
      }
      // Read after the company: it reflects at least that day's run.
      const dataAsOf = await readDataAsOf(db);
      return {
        status: 'success' as const,
        data: company.snapshot,
        meta: { fetched_at: clock.now().toISOString(), data_as_of: dataAsOf, first_seen_date: company.first_seen_date, last_changed_date: company.last_changed_date },
      };
    },

    async search(query: SearchQuery) {
      const { filters, page } = parseSearchQuery(query);
      const offset = (page - 1) * SEARCH_PAGE_SIZE;
      let answer;
      try {
        answer = await deps.search.search(filters, offset, SEARCH_PAGE_SIZE);
      } catch (e) {
        // Only the SQL path can time out: a wide search while this process builds its index.
        if ((e as { code?: string }).code === '57014') throw new TemporarilyUnavailableError('The search index is being built; this search took too long. Try again in a minute.');
        throw e;
      }
      const rows = await findResultRows(db, answer.ids);
      return {
        status: 'success' as const,
        data: {
          ...pageMeta(answer.total, page, SEARCH_PAGE_SIZE),
          data_as_of: answer.dataAsOf,
          results: rows.map(searchResultOf),
        },
      };
    },
  };
}

export type CompaniesService = ReturnType<typeof createCompaniesService>;
