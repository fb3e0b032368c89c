import type { Clock } from '../../../lib/clock.ts';
import { silentLog, type Log } from '../../../logger.ts';
import { systemClock } from '../../../lib/clock.ts';
import { parseIdentifier, isValidNip, stripNipFormatting } from '../../../lib/identifiers.ts';
import type { CompanySnapshot, Identifier } from '../../model.ts';
import type { RegistrySource } from '../source.ts';
import {
  MalformedPayloadError,
  SourceConfigError,
  SourceDateOutOfRangeError,
  SourceError,
  SourceUnavailableError,
  UpstreamResponseError,
  isRunFatal,
  type EntityErrorHandler,
} from '../errors.ts';
import {
  createHttpClient,
  defaultEntityErrorHandler,
  joinUrl,
  polishDate,
  responseText,
  trimBaseUrl,
  type HttpResponse,
  type RateLimitRule,
  type RetryPolicy,
} from '../http.ts';
import { mapVatSubject } from './vat-mapper.ts';
import { MAX_BACKFILL_DAYS } from '../backfill.ts';

/**
 * Ministry of Finance VAT white list (wl-api.mf.gov.pl). It has no change feed: the daily run
 * re-checks the NIPs the caller names (`nipsToRefresh`), 30 per request, within a daily
 * request budget, and keeps the ministry's request id of every answer (legal proof of the check).
 */

/** The search API takes at most 30 identifiers per request. */
export const VAT_BATCH_LIMIT = 30;

export interface VatRequestRecord {
  requestId: string;
  requestDateTime: string;
  /** The `date` the state was asked for. */
  date: string;
  identifiers: string[];
  kind: 'search' | 'check';
}

export interface VatSourceOptions {
  /** `https://wl-api.mf.gov.pl` (or the test host); a trailing `/api` or slash is fine. */
  baseUrl: string;
  /** The NIPs whose VAT state the daily run refreshes, e.g. the watched companies' NIPs. */
  nipsToRefresh?: (date: string) => AsyncIterable<string> | Iterable<string>;
  /**
   * Search requests this process sends per Polish calendar day (lookups and daily runs share
   * it). The quota is per IP and the commonly quoted value is 100; set what MF grants you.
   */
  searchRequestsPerDay?: number;
  checkRequestsPerDay?: number;
  /** NIPs per search request, at most 30. */
  batchSize?: number;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  rateLimits?: RateLimitRule[];
  clock?: Clock;
  logger?: Log;
  onEntityError?: EntityErrorHandler;
  /** Every answer's request id, for whoever must keep proof of the check. */
  onRequestId?: (record: VatRequestRecord) => void;
}

export interface VatAccountCheck {
  assigned: boolean;
  requestId: string;
  requestDateTime: string;
}

export interface VatSource extends RegistrySource {
  readonly name: 'vat';
  /** Is `account` (26-digit NRB) on the white list for this NIP or REGON on `date`? */
  checkAccount(identifier: Identifier, account: string, options?: { date?: string; signal?: AbortSignal }): Promise<VatAccountCheck>;
  /** The subjects holding an account number on `date`. */
  findByBankAccount(account: string, options?: { date?: string; signal?: AbortSignal }): Promise<CompanySnapshot[]>;
  /** Search requests left today in this process. */
  remainingSearchRequests(): number;
  close(): Promise<void>;
}

/** The white list's daily quota for this process is spent; the NIP was not refreshed. */
export class VatQuotaExceededError extends SourceError {
  constructor(message: string) {
    super('vat', message);
    this.name = 'VatQuotaExceededError';
  }
}

type Obj = Record<string, unknown>;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// WL-195 "database updated, repeat" and WL-196 "database being updated" pass within minutes.
const TRANSIENT_CODES = new Set(['WL-100', 'WL-195', 'WL-196']);

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function errorCode(response: HttpResponse): { code: string; message: string } | null {
  try {
    const body = JSON.parse(responseText(response)) as Obj;
    return typeof body.code === 'string' ? { code: body.code, message: String(body.message ?? '') } : null;
  } catch {
    return null;
  }
}

function apiRoot(baseUrl: string): string {
  const trimmed = trimBaseUrl(baseUrl);
  return /\/api$/i.test(trimmed) ? trimmed : `${trimmed}/api`;
}

export function createVatSource(options: VatSourceOptions): VatSource {
  if (!options.baseUrl?.trim()) throw new SourceConfigError('vat', 'VAT_API_URL (the white-list API base URL) is not set');
  const root = apiRoot(options.baseUrl);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLog;
  const onEntityError = options.onEntityError ?? defaultEntityErrorHandler('vat', logger);
  const batchSize = Math.min(VAT_BATCH_LIMIT, Math.max(1, options.batchSize ?? VAT_BATCH_LIMIT));
  const budgets = { search: options.searchRequestsPerDay ?? 100, check: options.checkRequestsPerDay ?? 5_000 };
  const spent = { day: '', search: 0, check: 0 };
  const http = createHttpClient({
    source: 'vat',
    timeoutMs: options.timeoutMs ?? 20_000,
    retry: options.retry,
    rateLimits: options.rateLimits ?? [{ limit: 2, windowMs: 1_000 }],
    maxConcurrent: 1,
    headers: { accept: 'application/json' },
    logger,
  });

  function today(): string {
    return polishDate(clock.now());
  }

  /** Counts one request against the day's quota; quotas reset at Polish midnight. */
  function spend(kind: 'search' | 'check'): boolean {
    const day = today();
    if (spent.day !== day) Object.assign(spent, { day, search: 0, check: 0 });
    if (spent[kind] >= budgets[kind]) return false;
    spent[kind] += 1;
    return true;
  }

  /** The white list refuses future dates (WL-103); a run dated ahead reads today's state. */
  function queryDate(date: string | undefined): string {
    const now = today();
    if (!date) return now;
    if (!ISO_DATE.test(date)) throw new RangeError(`date must be YYYY-MM-DD, got ${date}`);
    return date > now ? now : date;
  }

  async function call(kind: 'search' | 'check', path: string, date: string, identifiers: string[], signal?: AbortSignal): Promise<Obj> {
    if (!spend(kind)) {
      throw new SourceUnavailableError('vat', `vat: the daily ${kind} budget of ${budgets[kind]} requests is spent`, {
        reason: 'rate_limited',
      });
    }
    const response = await http.request({
      url: joinUrl(root, path),
      query: { date },
      signal,
      label: `vat ${path.split('/').slice(0, 2).join('/')}`,
      isRetryable: (r) => r.status >= 400 && TRANSIENT_CODES.has(errorCode(r)?.code ?? ''),
    });
    if (response.status !== 200) {
      const error = errorCode(response);
      const detail = `vat ${path.split('/')[1]} (${date}): HTTP ${response.status}${error ? ` ${error.code} ${error.message}` : ''}`;
      if (error?.code === 'WL-191' || response.status === 429)
        throw new SourceUnavailableError('vat', detail, { reason: 'rate_limited', status: response.status });
      if (error?.code === 'WL-118' || error?.code === 'WL-103') throw new SourceDateOutOfRangeError('vat', date, detail);
      // An unknown route (WL-190) or a server error means the configured service is not usable.
      if (response.status === 404 || response.status >= 500)
        throw new SourceUnavailableError('vat', detail, { reason: 'http', status: response.status });
      throw new UpstreamResponseError('vat', response.status, detail, { code: error?.code });
    }
    let body: unknown;
    try {
      body = JSON.parse(responseText(response));
    } catch (error) {
      throw new MalformedPayloadError('vat', identifiers.join(','), `the answer is not valid JSON (${(error as Error).message})`, {
        cause: error,
      });
    }
    const result = isObj(body) ? body.result : undefined;
    if (!isObj(result)) throw new MalformedPayloadError('vat', identifiers.join(','), 'the answer has no `result` object');
    const requestId = typeof result.requestId === 'string' ? result.requestId : '';
    if (requestId) {
      const record: VatRequestRecord = { requestId, requestDateTime: String(result.requestDateTime ?? ''), date, identifiers, kind };
      logger.info({ source: 'vat', ...record }, 'white-list answer');
      options.onRequestId?.(record);
    }
    return result;
  }

  async function* refresh(date: string, signal?: AbortSignal): AsyncGenerator<CompanySnapshot> {
    if (!options.nipsToRefresh) {
      logger.info({ source: 'vat', date }, 'no NIPs to refresh: the white list has no change feed');
      return;
    }
    const asOf = queryDate(date);
    const seen = new Set<string>();
    let batch: string[] = [];
    let quotaHit = false;

    async function* flush(): AsyncGenerator<CompanySnapshot> {
      const nips = batch;
      batch = [];
      if (nips.length === 0) return;
      if (quotaHit || !spendAvailable()) {
        quotaHit = true;
        for (const nip of nips)
          onEntityError(
            nip,
            new VatQuotaExceededError(`vat ${nip}: not refreshed, the daily search budget of ${budgets.search} requests is spent`),
          );
        return;
      }
      let result: Obj;
      try {
        result = await call('search', `search/nips/${nips.join(',')}`, asOf, nips, signal);
      } catch (error) {
        if (isRunFatal(error)) throw error;
        for (const nip of nips) onEntityError(nip, error as Error);
        return;
      }
      for (const entry of Array.isArray(result.entries) ? result.entries : []) {
        if (!isObj(entry)) continue;
        const identifier = String(entry.identifier ?? '');
        if (isObj(entry.error)) {
          const code = String(entry.error.code ?? '');
          onEntityError(
            identifier,
            new UpstreamResponseError('vat', 400, `vat ${identifier}: ${code} ${String(entry.error.message ?? '')}`.trim(), { code }),
          );
          continue;
        }
        const subjects = Array.isArray(entry.subjects) ? entry.subjects.filter(isObj) : [];
        // Not on the list: never a VAT taxpayer, or removed more than five years ago.
        if (subjects.length === 0) continue;
        const subject = subjects.find((s) => s.nip === identifier) ?? subjects[0]!;
        try {
          yield mapVatSubject(subject, identifier);
        } catch (error) {
          onEntityError(identifier, error as Error);
        }
      }
    }

    for await (const raw of options.nipsToRefresh(date)) {
      const nip = stripNipFormatting(String(raw));
      if (!isValidNip(nip) || seen.has(nip)) continue;
      seen.add(nip);
      batch.push(nip);
      if (batch.length >= batchSize) yield* flush();
    }
    yield* flush();
  }

  function spendAvailable(): boolean {
    const day = today();
    return spent.day !== day || spent.search < budgets.search;
  }

  return {
    name: 'vat',
    maxBackfillDays: MAX_BACKFILL_DAYS.vat,
    snapshotsForDate: (date, opts) => refresh(date, opts?.signal),
    async lookup(identifier, opts) {
      if (identifier.type === 'KRS') return null;
      const parsed = parseIdentifier(identifier.type, identifier.value);
      if (!parsed.ok) return null;
      const kind = identifier.type === 'NIP' ? 'nip' : 'regon';
      const result = await call('search', `search/${kind}/${parsed.value}`, queryDate(undefined), [parsed.value], opts?.signal);
      return isObj(result.subject) ? mapVatSubject(result.subject, parsed.value) : null;
    },
    async checkAccount(identifier, account, opts) {
      const parsed = parseIdentifier(identifier.type, identifier.value);
      if (!parsed.ok || identifier.type === 'KRS')
        throw new RangeError(`checkAccount needs a valid NIP or REGON9, got ${identifier.type} ${identifier.value}`);
      const nrb = account.replace(/[\s-]/g, '').replace(/^PL/i, '');
      const kind = identifier.type === 'NIP' ? 'nip' : 'regon';
      const result = await call(
        'check',
        `check/${kind}/${parsed.value}/bank-account/${nrb}`,
        queryDate(opts?.date),
        [parsed.value],
        opts?.signal,
      );
      return {
        assigned: result.accountAssigned === 'TAK',
        requestId: String(result.requestId ?? ''),
        requestDateTime: String(result.requestDateTime ?? ''),
      };
    },
    async findByBankAccount(account, opts) {
      const nrb = account.replace(/[\s-]/g, '').replace(/^PL/i, '');
      const result = await call('search', `search/bank-account/${nrb}`, queryDate(opts?.date), [nrb], opts?.signal);
      return (Array.isArray(result.subjects) ? result.subjects : []).map((s) => mapVatSubject(s, nrb));
    },
    remainingSearchRequests() {
      return spent.day === today() ? Math.max(0, budgets.search - spent.search) : budgets.search;
    },
    close: () => http.close(),
  };
}
