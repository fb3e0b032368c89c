/**
 * Names for the generated types (src/generated/openapi.ts, from the app's OpenAPI document):
 * an operation's query, body and success body by path and method, and the items users meet most.
 */
import type { paths } from './generated/openapi.ts';

export type { components, paths } from './generated/openapi.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;

/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The JSON body an operation takes. */
export type BodyOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON body of an operation's success (2xx) answer. */
export type ResultOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 | 202 ? JsonOf<R[S]> : never }[keyof R] : never;

/**
 * A list's query as callers write it: `page` and `per_page` have server defaults (1, 20), which
 * the SDK sends when they are left out.
 */
export type PageQuery<Q> = Omit<Q, 'page' | 'per_page'> & { page?: number; per_page?: number };
/** The same without `page`: what the `...All` iterators take (they walk the pages themselves). */
export type AllQuery<Q> = Omit<Q, 'page' | 'per_page'> & { per_page?: number };

export type SearchQuery = QueryOf<'/api/v1/companies/search', 'get'>;
export type SearchFilters = Omit<SearchQuery, 'page'>;
export type SearchPage = ResultOf<'/api/v1/companies/search', 'get'>;
export type SearchResult = SearchPage['data']['results'][number];
export type Snapshot = ResultOf<'/api/v1/companies/snapshot', 'post'>;
export type CompanyIdentifier = BodyOf<'/api/v1/companies/snapshot', 'post'>;
export type IdentifierType = CompanyIdentifier['identifier_type'];

export type FeedQuery = QueryOf<'/api/v1/watchlist/events', 'get'>;
export type FeedPage = ResultOf<'/api/v1/watchlist/events', 'get'>;
export type FeedEvent = FeedPage['data'][number];
export type EventType = NonNullable<BodyOf<'/api/v1/webhooks', 'post'>['event_types']>[number];
/**
 * The body of a webhook message (docs/webhooks.md): the event in feed form; `data.test` is true on
 * a message sent by `webhooks.test`, whose values are samples.
 */
export interface WebhookMessage {
  type: EventType;
  /** When the event was created (ISO 8601). */
  timestamp: string;
  data: FeedEvent & { test?: true };
}
export type CompanyEventsQuery = QueryOf<'/api/v1/companies/events', 'get'>;
export type CompanyEvents = ResultOf<'/api/v1/companies/events', 'get'>;
export type CompanyEvent = CompanyEvents['data']['events'][number];

export type WatchChange = BodyOf<'/api/v1/companies/add', 'post'>;
export type WatchedCompany = ResultOf<'/api/v1/companies/watched', 'get'>['data'][number];

export type Token = ResultOf<'/api/v1/tokens/{token_ref}', 'get'>['data'];
export type CreatedToken = ResultOf<'/api/v1/tokens', 'post'>['data'];

export type Webhook = ResultOf<'/api/v1/webhooks/{id}', 'get'>['data'];
export type CreatedWebhook = ResultOf<'/api/v1/webhooks', 'post'>['data'];
export type WebhookDelivery = ResultOf<'/api/v1/webhooks/{id}/deliveries', 'get'>['data'][number];

export type WalletTransaction = ResultOf<'/api/v1/wallet/transactions', 'get'>['data'][number];
export type ActivityCode = ResultOf<'/api/v1/dictionaries/activities', 'get'>['data'][number];
