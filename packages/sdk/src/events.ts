import { type Api, type CallOptions, eachItem, unwrap, withPage } from './core.ts';
import { RateLimitError, ServiceUnavailableError } from './errors.ts';
import { delay } from './transport.ts';
import type { AllQuery, CompanyEvent, CompanyEvents, CompanyEventsQuery, FeedEvent, FeedPage, FeedQuery, PageQuery } from './types.ts';

type FeedFilters = Omit<FeedQuery, 'page' | 'per_page' | 'after_id'>;

export interface StreamOptions extends FeedFilters {
  /** Start after this event id (0, the default: from the first event). Keep the last `id` you processed and pass it here next time. */
  afterId?: number;
  /** Events a request (1-100, default 100). */
  perPage?: number;
  /** Wait between polls once caught up (default 60 s; each poll costs a credit). */
  intervalMs?: number;
  /** Ends the stream: the iterator returns, between events or during a wait. */
  signal?: AbortSignal;
}

/** The feed of the watched companies' events and one company's history. */
export class Events {
  constructor(private readonly api: Api) {}

  /** One page of the feed, newest first (a credit a page). */
  feed(query: PageQuery<FeedFilters> = {}, options: CallOptions = {}): Promise<FeedPage> {
    return unwrap(this.api.GET('/api/v1/watchlist/events', { params: { query: withPage(query) }, signal: options.signal }));
  }

  /** Every event of the feed, newest first, page after page. */
  feedAll(query: AllQuery<FeedFilters> = {}, options: CallOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
    return eachItem(async (page) => {
      const { data, meta } = await this.feed({ ...query, page }, options);
      return { items: data, lastPage: 'last_page' in meta ? meta.last_page : page };
    });
  }

  /** One page of a company's events, watched or not (a credit). */
  companyEvents(query: PageQuery<CompanyEventsQuery>, options: CallOptions = {}): Promise<CompanyEvents> {
    return unwrap(this.api.GET('/api/v1/companies/events', { params: { query: withPage(query) }, signal: options.signal }));
  }

  /** Every event of a company, page after page. */
  companyEventsAll(query: AllQuery<CompanyEventsQuery>, options: CallOptions = {}): AsyncGenerator<CompanyEvent, void, undefined> {
    return eachItem(async (page) => {
      const { data, meta } = await this.companyEvents({ ...query, page }, options);
      return { items: data.events, lastPage: meta.last_page };
    });
  }

  /**
   * The feed as an endless stream, oldest first, from `afterId` on (the `after_id` polling mode):
   * it reads on at once while the API says there is more, and waits `intervalMs` once caught up.
   * Each event comes once: the next request starts after the last id yielded, which the API
   * guarantees misses nothing even while a daily run writes. A 429 or 503 that outlasts the
   * client's retries is waited out (`Retry-After`), not thrown; other errors end the stream.
   * Stop it with `signal` or `break`.
   */
  async *stream(options: StreamOptions = {}): AsyncGenerator<FeedEvent, void, undefined> {
    const { afterId = 0, perPage = 100, intervalMs = 60_000, signal, ...filters } = options;
    let cursor = afterId;
    while (!signal?.aborted) {
      let page: FeedPage;
      try {
        page = await unwrap(
          this.api.GET('/api/v1/watchlist/events', {
            params: { query: { ...filters, page: 1, per_page: perPage, after_id: cursor } },
            signal,
          }),
        );
      } catch (e) {
        if (signal?.aborted) return;
        // Still limited or unavailable after the client's retries: a stream outlives that, waiting what the server asked.
        if (e instanceof RateLimitError || e instanceof ServiceUnavailableError) {
          await delay(e.retryAfterMs ?? intervalMs, signal);
          continue;
        }
        throw e;
      }
      for (const event of page.data) {
        if (event.id <= cursor) continue;
        cursor = event.id;
        yield event;
        if (signal?.aborted) return;
      }
      const more = 'has_more' in page.meta && page.meta.has_more;
      if (!more) await delay(intervalMs, signal);
    }
  }
}
