import { type Api, type CallOptions, eachItem, unwrap, withPage } from './core.ts';
import type { ResultOf, WatchChange, WatchedCompany } from './types.ts';

/** The watchlist: companies whose changes reach the feed and the webhooks. */
export class Watchlist {
  constructor(private readonly api: Api) {}

  /** Watch companies (a credit each newly watched): `add({ identifier_type: 'KRS', identifier_value: ['0000012345'] })`. Answers 202 with a `request_id`. */
  add(change: WatchChange, options: CallOptions = {}): Promise<ResultOf<'/api/v1/companies/add', 'post'>> {
    return unwrap(this.api.POST('/api/v1/companies/add', { body: change, signal: options.signal }));
  }

  /** Stop watching companies (free). */
  remove(change: WatchChange, options: CallOptions = {}): Promise<ResultOf<'/api/v1/companies/watched', 'delete'>> {
    return unwrap(this.api.DELETE('/api/v1/companies/watched', { body: change, signal: options.signal }));
  }

  /** One page of the watched companies, newest watch first (free). */
  list(query: { page?: number; per_page?: number } = {}, options: CallOptions = {}): Promise<ResultOf<'/api/v1/companies/watched', 'get'>> {
    return unwrap(this.api.GET('/api/v1/companies/watched', { params: { query: withPage(query) }, signal: options.signal }));
  }

  /** Every watched company, page after page. */
  listAll(query: { per_page?: number } = {}, options: CallOptions = {}): AsyncGenerator<WatchedCompany, void, undefined> {
    return eachItem(async (page) => {
      const { data, meta } = await this.list({ ...query, page }, options);
      return { items: data, lastPage: meta.last_page };
    });
  }

  /** Follow an add request: each value's outcome once the registries answered (free). */
  request(requestId: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/watchlist/requests/{request_id}', 'get'>> {
    return unwrap(
      this.api.GET('/api/v1/watchlist/requests/{request_id}', { params: { path: { request_id: requestId } }, signal: options.signal }),
    );
  }
}
