import { type Api, type CallOptions, eachItem, unwrap, withPage } from './core.ts';
import type { ActivityCode, AllQuery, PageQuery, QueryOf, ResultOf } from './types.ts';

type ActivitiesQuery = QueryOf<'/api/v1/dictionaries/activities', 'get'>;

/** Registry activity counts (10 requests a minute per IP). */
export class Stats {
  constructor(private readonly api: Api) {}

  /** New, updated and deleted companies of one day (`YYYY-MM-DD`). */
  day(date: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/stats/day/{date}', 'get'>> {
    return unwrap(this.api.GET('/api/v1/stats/day/{date}', { params: { path: { date } }, signal: options.signal }));
  }

  /** The same over the 30 days ending at `date`. */
  range(date: string, options: CallOptions = {}): Promise<ResultOf<'/api/v1/stats/range/{date}', 'get'>> {
    return unwrap(this.api.GET('/api/v1/stats/range/{date}', { params: { path: { date } }, signal: options.signal }));
  }
}

/** The values the search filters take. */
export class Dictionaries {
  constructor(private readonly api: Api) {}

  legalForms(options: CallOptions = {}): Promise<ResultOf<'/api/v1/dictionaries/legal-forms', 'get'>> {
    return unwrap(this.api.GET('/api/v1/dictionaries/legal-forms', { signal: options.signal }));
  }

  voivodeships(options: CallOptions = {}): Promise<ResultOf<'/api/v1/dictionaries/voivodeships', 'get'>> {
    return unwrap(this.api.GET('/api/v1/dictionaries/voivodeships', { signal: options.signal }));
  }

  /** One page of PKD activity codes. */
  activities(
    query: PageQuery<ActivitiesQuery> = {},
    options: CallOptions = {},
  ): Promise<ResultOf<'/api/v1/dictionaries/activities', 'get'>> {
    return unwrap(this.api.GET('/api/v1/dictionaries/activities', { params: { query: withPage(query) }, signal: options.signal }));
  }

  activitiesAll(query: AllQuery<ActivitiesQuery> = {}, options: CallOptions = {}): AsyncGenerator<ActivityCode, void, undefined> {
    return eachItem(async (page) => {
      const { data, meta } = await this.activities({ ...query, page }, options);
      return { items: data, lastPage: meta.last_page };
    });
  }
}
