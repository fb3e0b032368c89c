import type { Client } from 'openapi-fetch';
import { errorFromResponse } from './errors.ts';
import type { paths } from './generated/openapi.ts';

export type Api = Client<paths>;

/** Per-call options every method takes last. */
export interface CallOptions {
  /** Aborts the call (and any wait between retries). */
  signal?: AbortSignal;
}

/** The success body of an openapi-fetch call, or the typed error of its failure. */
export async function unwrap<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as D;
}

export const DEFAULT_PER_PAGE = 20;

/** `page` and `per_page` filled with the server's defaults, so that a request says which page it read. */
export function withPage<Q extends { page?: number; per_page?: number }>(
  query: Q,
): Omit<Q, 'page' | 'per_page'> & { page: number; per_page: number } {
  return { ...query, page: query.page ?? 1, per_page: query.per_page ?? DEFAULT_PER_PAGE };
}

/**
 * Walks a page-numbered list from page 1 to its last page, one request at a time, yielding the
 * items. `last_page` is read again from every page, so a list that grows while it is walked is
 * followed to its new end.
 */
export async function* eachItem<T>(
  fetchPage: (page: number) => Promise<{ items: readonly T[]; lastPage: number }>,
): AsyncGenerator<T, void, undefined> {
  for (let page = 1; ; page++) {
    const { items, lastPage } = await fetchPage(page);
    yield* items;
    if (page >= lastPage || items.length === 0) return;
  }
}
