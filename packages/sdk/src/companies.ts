import { type Api, type CallOptions, eachItem, unwrap } from './core.ts';
import type { BodyOf, CompanyIdentifier, ResultOf, SearchFilters, SearchPage, SearchQuery, SearchResult, Snapshot } from './types.ts';

/** The pages of a search the API serves when it holds more results (docs/search.md, `page`). */
export const SEARCH_MAX_PAGES = 500;

/**
 * Search and snapshots (`/companies/search`, `/companies/snapshot`). Each search page and each
 * snapshot costs a credit; a match batch costs a credit a query.
 */
export class Companies {
  constructor(private readonly api: Api) {}

  /** One page (20 results) of a search: `{ data: { total, per_page, current_page, last_page, results } }`. */
  search(filters: SearchFilters & { page?: number } = {}, options: CallOptions = {}): Promise<SearchPage> {
    const query: SearchQuery = { ...filters, page: filters.page ?? 1 };
    return unwrap(this.api.GET('/api/v1/companies/search', { params: { query }, signal: options.signal }));
  }

  /**
   * Every result of a search the API serves, page after page (a credit a page): the first
   * SEARCH_MAX_PAGES pages (10,000 results at 20 a page) when there are more, as the API refuses
   * a page beyond them that would hold results (docs/search.md). Narrow the filters to reach the rest.
   */
  searchAll(filters: SearchFilters = {}, options: CallOptions = {}): AsyncGenerator<SearchResult, void, undefined> {
    return eachItem(async (page) => {
      const { data } = await this.search({ ...filters, page }, options);
      return { items: data.results, lastPage: Math.min(data.last_page, SEARCH_MAX_PAGES) };
    });
  }

  /** The full profile of one company: `snapshot({ identifier_type: 'NIP', identifier_value: '5250001090' })`. */
  snapshot(company: CompanyIdentifier, options: CallOptions = {}): Promise<Snapshot> {
    return unwrap(this.api.POST('/api/v1/companies/snapshot', { body: company, signal: options.signal }));
  }

  /**
   * Up to 100 messy names, addresses or identifiers matched to companies, each with up to five
   * scored candidates and at most one `match: true` (docs/match.md): `match({ queries: [{ name: 'Firma sp. z o.o.', city: 'Lodz' }] })`.
   */
  match(body: BodyOf<'/api/v1/companies/match', 'post'>, options: CallOptions = {}): Promise<ResultOf<'/api/v1/companies/match', 'post'>> {
    return unwrap(this.api.POST('/api/v1/companies/match', { body, signal: options.signal }));
  }
}
