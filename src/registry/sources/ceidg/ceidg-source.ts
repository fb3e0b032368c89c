import type { Identifier } from '../../model.ts';
import { silentLog, type Log } from '../../../logger.ts';
import { parseIdentifier } from '../../../lib/identifiers.ts';
import type { RegistrySource } from '../source.ts';
import {
  EntityNotFoundError,
  MalformedPayloadError,
  SourceConfigError,
  SourceUnavailableError,
  UpstreamResponseError,
  type EntityErrorHandler,
} from '../errors.ts';
import {
  createHttpClient,
  defaultEntityErrorHandler,
  joinUrl,
  responseText,
  trimBaseUrl,
  type HttpResponse,
  type RateLimitRule,
  type RetryPolicy,
} from '../http.ts';
import { ceidgStatus, mapCeidgEntry, normalizeEntryId, pickCurrentEntry } from './ceidg-mapper.ts';
import { MAX_BACKFILL_DAYS } from '../backfill.ts';

/**
 * CEIDG data warehouse API (dane.biznes.gov.pl, v2 or v3): `/zmiana` is the daily change feed
 * of entry ids, `/firma?ids=` fetches them again, `/firma?nip=|regon=` serves lookups.
 */

/** 50 requests per 3 minutes and 1 000 per hour per token (CEIDG documentation). */
export const CEIDG_RATE_LIMITS: RateLimitRule[] = [
  { limit: 50, windowMs: 180_000 },
  { limit: 1_000, windowMs: 3_600_000 },
];

export interface CeidgSourceOptions {
  /** The API base including the version, e.g. `https://dane.biznes.gov.pl/api/ceidg/v2`. */
  baseUrl: string;
  /** Bearer JWT issued on biznes.gov.pl; it embeds the requester's PESEL, so it is never logged. */
  token: string;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  rateLimits?: RateLimitRule[];
  /** Entry ids per `/firma?ids=` request. */
  batchSize?: number;
  /** Page size of `/zmiana`. */
  pageSize?: number;
  logger?: Log;
  onEntityError?: EntityErrorHandler;
}

export interface CeidgReport {
  id: string;
  name: string;
  format: string;
  url: string;
  createdAt: string;
}

export interface CeidgSource extends RegistrySource {
  readonly name: 'ceidg';
  /** Upper-case ids of the entries changed on `date` (Polish calendar day). */
  changedEntryIds(date: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  /** Ready-made daily CSV reports of the window (`/raporty`). */
  listReports(from: string, to: string, options?: { signal?: AbortSignal }): Promise<CeidgReport[]>;
  close(): Promise<void>;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const MAX_PAGES = 10_000;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function createCeidgSource(options: CeidgSourceOptions): CeidgSource {
  if (!options.baseUrl?.trim()) throw new SourceConfigError('ceidg', 'CEIDG_API_URL (the CEIDG API base URL) is not set');
  if (!options.token?.trim()) throw new SourceConfigError('ceidg', 'CEIDG_API_TOKEN (the CEIDG bearer token) is not set');
  const root = trimBaseUrl(options.baseUrl);
  const logger = options.logger ?? silentLog;
  const onEntityError = options.onEntityError ?? defaultEntityErrorHandler('ceidg', logger);
  const batchSize = Math.max(1, options.batchSize ?? 25);
  const pageSize = Math.max(1, options.pageSize ?? 100);
  const http = createHttpClient({
    source: 'ceidg',
    timeoutMs: options.timeoutMs ?? 30_000,
    // After a 429 CEIDG asks for about three minutes; Retry-After is honoured up to that.
    retry: { retryAfterMaxMs: 180_000, ...options.retry },
    rateLimits: options.rateLimits ?? CEIDG_RATE_LIMITS,
    maxConcurrent: 1,
    headers: { authorization: `Bearer ${options.token.trim()}`, accept: 'application/json' },
    logger,
  });

  async function get(path: string, query: Record<string, string>, label: string, signal?: AbortSignal): Promise<HttpResponse | null> {
    const response = await http.request({ url: joinUrl(root, path), query, signal, label: `ceidg ${label}` });
    if (response.status === 204 || response.status === 404) return null;
    if (response.status === 401 || response.status === 403) {
      throw new SourceUnavailableError('ceidg', `ceidg ${label}: HTTP ${response.status} (token rejected or expired)`, {
        reason: 'auth',
        status: response.status,
      });
    }
    if (response.status !== 200) {
      let code: string | undefined;
      try {
        code = (JSON.parse(responseText(response)) as { code?: string }).code;
      } catch {
        code = undefined;
      }
      throw new UpstreamResponseError('ceidg', response.status, `ceidg ${label}: HTTP ${response.status}${code ? ` ${code}` : ''}`, {
        code,
      });
    }
    return response;
  }

  function json(response: HttpResponse, identifier: string): Obj {
    let parsed: unknown;
    try {
      parsed = JSON.parse(responseText(response));
    } catch (error) {
      throw new MalformedPayloadError('ceidg', identifier, `the answer is not valid JSON (${(error as Error).message})`, { cause: error });
    }
    if (!isObj(parsed)) throw new MalformedPayloadError('ceidg', identifier, 'the answer is not a JSON object');
    return parsed;
  }

  function entriesOf(body: Obj, key: 'firma' | 'firmy', identifier: string): Obj[] {
    const list = body[key];
    if (list === undefined) return [];
    if (!Array.isArray(list)) throw new MalformedPayloadError('ceidg', identifier, `\`${key}\` is not an array`);
    return list.filter(isObj);
  }

  async function changedEntryIds(date: string, opts?: { signal?: AbortSignal }): Promise<string[]> {
    if (!ISO_DATE.test(date)) throw new RangeError(`date must be YYYY-MM-DD, got ${date}`);
    const ids = new Set<string>();
    for (let page = 0; page < MAX_PAGES; page++) {
      let response: HttpResponse | null;
      let body: Obj;
      try {
        response = await get(
          'zmiana',
          { dataod: `${date} 00:00:00`, datado: `${date} 23:59:59`, page: String(page), limit: String(pageSize) },
          `zmiana ${date} page ${page}`,
          opts?.signal,
        );
        if (!response) break;
        body = json(response, `zmiana ${date}`);
      } catch (error) {
        // Without the complete change feed the day cannot be run.
        if (error instanceof SourceUnavailableError) throw error;
        throw new SourceUnavailableError('ceidg', `ceidg zmiana ${date}: ${(error as Error).message}`, { reason: 'service', cause: error });
      }
      const batch = Array.isArray(body.identyfikatoryWpisow) ? body.identyfikatoryWpisow : [];
      for (const id of batch) if (typeof id === 'string' && id.trim()) ids.add(normalizeEntryId(id));
      const links = isObj(body.links) ? body.links : {};
      const count = Number(body.count);
      const lastPage =
        batch.length === 0 ||
        batch.length < pageSize ||
        (Number.isFinite(count) && (page + 1) * pageSize >= count) ||
        (links.next !== undefined && links.next === links.self);
      if (lastPage) break;
    }
    return [...ids];
  }

  /** The owner's current entry when a changed entry was deleted (an owner may have several). */
  async function currentEntryFor(entry: Obj, signal?: AbortSignal): Promise<Obj> {
    const nip = isObj(entry.wlasciciel) ? String(entry.wlasciciel.nip ?? '') : '';
    if (ceidgStatus(entry) !== 'WYKRESLONY' || !nip) return entry;
    const listing = await get('firmy', { nip }, `firmy nip=${nip}`, signal);
    if (!listing) return entry;
    const best = pickCurrentEntry(entriesOf(json(listing, nip), 'firmy', nip));
    if (!best || ceidgStatus(best) === 'WYKRESLONY' || normalizeEntryId(String(best.id ?? '')) === normalizeEntryId(String(entry.id ?? '')))
      return entry;
    const detail = await get(`firma/${encodeURIComponent(normalizeEntryId(String(best.id)))}`, {}, `firma ${String(best.id)}`, signal);
    return entriesOf(detail ? json(detail, String(best.id)) : {}, 'firma', String(best.id))[0] ?? entry;
  }

  async function fetchBatch(ids: string[], signal?: AbortSignal): Promise<Map<string, Obj | Error>> {
    const out = new Map<string, Obj | Error>();
    const response = await get('firma', { ids: ids.join(',') }, `firma ids (${ids.length})`, signal);
    let entries: Obj[];
    try {
      entries = response ? entriesOf(json(response, ids.join(',')), 'firma', ids.join(',')) : [];
    } catch (error) {
      if (!(error instanceof MalformedPayloadError) || ids.length === 1) {
        for (const id of ids) out.set(id, error as Error);
        return out;
      }
      // One unreadable entry spoils the whole batch; asking one by one isolates it.
      for (const id of ids) for (const [k, v] of await fetchBatch([id], signal)) out.set(k, v);
      return out;
    }
    for (const entry of entries) out.set(normalizeEntryId(String(entry.id ?? '')), entry);
    return out;
  }

  return {
    name: 'ceidg',
    maxBackfillDays: MAX_BACKFILL_DAYS.ceidg,
    changedEntryIds,
    async listReports(from, to, opts) {
      const response = await get('raporty', { dataod: from, datado: to }, `raporty ${from}..${to}`, opts?.signal);
      if (!response) return [];
      const body = json(response, `raporty ${from}..${to}`);
      return (Array.isArray(body.raporty) ? body.raporty : []).filter(isObj).map((r) => ({
        id: String(r.id ?? ''),
        name: String(r.nazwa ?? ''),
        format: String(r.format ?? ''),
        url: String(r.raport ?? ''),
        createdAt: String(r['data-utworzenia'] ?? ''),
      }));
    },
    async *snapshotsForDate(date, opts) {
      const ids = await changedEntryIds(date, opts);
      logger.info({ source: 'ceidg', date, changed: ids.length }, 'CEIDG change feed read');
      const emitted = new Set<string>();
      for (let i = 0; i < ids.length; i += batchSize) {
        const batch = ids.slice(i, i + batchSize);
        const results = await fetchBatch(batch, opts?.signal);
        for (const id of batch) {
          const result = results.get(id);
          try {
            if (result === undefined)
              throw new EntityNotFoundError('ceidg', id, `ceidg ${id}: in the change feed but not returned by /firma`);
            if (result instanceof Error) throw result;
            const snapshot = mapCeidgEntry(await currentEntryFor(result, opts?.signal), id);
            // Two changed entries of one owner describe the same company: report it once.
            const key = snapshot.identity.identifiers.map((x) => `${x.type}:${x.value}`).join('|');
            if (emitted.has(key)) continue;
            emitted.add(key);
            yield snapshot;
          } catch (error) {
            if (error instanceof SourceUnavailableError || (error as Error).name === 'AbortError') throw error;
            onEntityError(id, error as Error);
          }
        }
      }
    },
    async lookup(identifier: Identifier, opts) {
      if (identifier.type === 'KRS') return null;
      const parsed = parseIdentifier(identifier.type, identifier.value);
      if (!parsed.ok) return null;
      const param = identifier.type === 'NIP' ? 'nip' : 'regon';
      const response = await get('firma', { [param]: parsed.value }, `firma ${param}=${parsed.value}`, opts?.signal);
      if (!response) return null;
      const best = pickCurrentEntry(entriesOf(json(response, parsed.value), 'firma', parsed.value));
      return best ? mapCeidgEntry(best, parsed.value) : null;
    },
    close: () => http.close(),
  };
}
