import createClient from 'openapi-fetch';
import { Auth, Tokens, Wallet } from './account.ts';
import { Companies } from './companies.ts';
import { type Api, unwrap } from './core.ts';
import { Events } from './events.ts';
import type { paths } from './generated/openapi.ts';
import { Dictionaries, Stats } from './reference.ts';
import { type FetchLike, type RetryOptions, retryingFetch } from './transport.ts';
import { Watchlist } from './watchlist.ts';
import { Webhooks } from './webhooks.ts';

export interface RegwatchOptions {
  /** The Master Token (`sk_live_…`) or an API token (`sk_api_…`). Not needed for `auth.*`. */
  token?: string;
  /** Where the service runs, e.g. `https://regwatch.example` (no `/api/v1`). */
  baseUrl: string;
  /** A fetch of your own (default: the global one). */
  fetch?: FetchLike;
  /** Retrying 429 and 503 answers (default: 3 attempts, honouring `Retry-After`). */
  retry?: RetryOptions;
  /** Headers sent with every request (e.g. `x-request-id`). */
  headers?: Record<string, string>;
}

/**
 * The regwatch API client: one method per operation, grouped by resource. Every method resolves
 * to the documented response body (typed from the OpenAPI document) or throws a `RegwatchError`.
 *
 * ```ts
 * const rw = new Regwatch({ token: process.env.REGWATCH_TOKEN, baseUrl: 'https://regwatch.example' });
 * for await (const company of rw.companies.searchAll({ q: 'piekarnia', city: 'Kraków' })) console.log(company.name);
 * ```
 */
export class Regwatch {
  readonly companies: Companies;
  readonly watchlist: Watchlist;
  readonly events: Events;
  readonly wallet: Wallet;
  readonly tokens: Tokens;
  readonly webhooks: Webhooks;
  readonly stats: Stats;
  readonly dictionaries: Dictionaries;
  readonly auth: Auth;
  /** The underlying openapi-fetch client, typed by the document: for an operation this SDK does not wrap yet. */
  readonly api: Api;

  constructor(options: RegwatchOptions) {
    if (!options?.baseUrl) throw new TypeError('Regwatch: baseUrl is required (e.g. https://regwatch.example).');
    const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: retryingFetch(base, options.retry),
      headers: { ...options.headers, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
    });
    this.companies = new Companies(this.api);
    this.watchlist = new Watchlist(this.api);
    this.events = new Events(this.api);
    this.wallet = new Wallet(this.api);
    this.tokens = new Tokens(this.api);
    this.webhooks = new Webhooks(this.api);
    this.stats = new Stats(this.api);
    this.dictionaries = new Dictionaries(this.api);
    this.auth = new Auth(this.api);
  }

  /** Liveness and database readiness (`GET /health`, not limited, no token). */
  health(options: { signal?: AbortSignal } = {}) {
    return unwrap(this.api.GET('/health', { signal: options.signal }));
  }

  /** Each registry source's health, last completed day, last run, gaps and coverage (`GET /api/v1/sources`, no token). */
  sources(options: { signal?: AbortSignal } = {}) {
    return unwrap(this.api.GET('/api/v1/sources', { signal: options.signal }));
  }
}
