import type { CompanySnapshot, Identifier } from '../../model.ts';
import { silentLog, type Log } from '../../../logger.ts';
import { normalizeKrs } from '../../../lib/identifiers.ts';
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
  fetchEntities,
  joinUrl,
  responseText,
  trimBaseUrl,
  type HttpClient,
  type HttpResponse,
  type RetryPolicy,
} from '../http.ts';
import { mapKrsExtract, parseBulletin } from './krs-extract.ts';
import { MAX_BACKFILL_DAYS } from '../backfill.ts';

/**
 * KRS open API of the Ministry of Justice (api-krs.ms.gov.pl): current extract by number, full
 * extract for deleted entities, and the daily bulletin of changed numbers as the change feed.
 */

export interface KrsSourceOptions {
  /** `https://api-krs.ms.gov.pl` or `https://api-krs.ms.gov.pl/api/krs`; a trailing slash is fine. */
  baseUrl: string;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Extracts fetched at once during a daily run. Throttling is undocumented, so stay modest. */
  concurrency?: number;
  /** Client-side cap; the API documents none, this keeps the connector polite. */
  requestsPerSecond?: number;
  /**
   * `current` (default) reads OdpisAktualny and falls back to OdpisPelny for deleted entities;
   * `full` always reads OdpisPelny, which is larger but dates liquidation, bankruptcy and
   * restructuring by their register entries when the decision date is not written out.
   */
  extract?: 'current' | 'full';
  logger?: Log;
  onEntityError?: EntityErrorHandler;
}

export interface KrsSource extends RegistrySource {
  readonly name: 'krs';
  /** Distinct, zero-padded KRS numbers of the day's bulletin. */
  changedKrsNumbers(date: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  /** The extract of one KRS number as a snapshot; null when neither register knows it. */
  fetchSnapshot(krs: string, options?: { signal?: AbortSignal }): Promise<CompanySnapshot | null>;
  close(): Promise<void>;
}

type Register = 'P' | 'S';
const REGISTERS: readonly Register[] = ['P', 'S'];
const REGISTER_MEMORY = 50_000;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

function apiRoot(baseUrl: string): string {
  const trimmed = trimBaseUrl(baseUrl);
  return /\/api\/krs$/i.test(trimmed) ? trimmed : `${trimmed}/api/krs`;
}

function parseJson(response: HttpResponse, identifier: string): unknown {
  try {
    return JSON.parse(responseText(response));
  } catch (error) {
    throw new MalformedPayloadError('krs', identifier, `the answer is not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

export function createKrsSource(options: KrsSourceOptions): KrsSource {
  if (!options.baseUrl?.trim()) throw new SourceConfigError('krs', 'KRS_API_URL (the KRS API base URL) is not set');
  const root = apiRoot(options.baseUrl);
  const logger = options.logger ?? silentLog;
  const onEntityError = options.onEntityError ?? defaultEntityErrorHandler('krs', logger);
  const concurrency = options.concurrency ?? 2;
  const http: HttpClient = createHttpClient({
    source: 'krs',
    timeoutMs: options.timeoutMs ?? 20_000,
    retry: options.retry,
    rateLimits: [{ limit: options.requestsPerSecond ?? 5, windowMs: 1_000 }],
    maxConcurrent: concurrency,
    headers: { accept: 'application/json' },
    logger,
  });
  // Each number lives in one register only; remembering it saves a 404 round trip for S entities.
  const knownRegister = new Map<string, Register>();

  function rememberRegister(krs: string, register: Register): void {
    if (knownRegister.size >= REGISTER_MEMORY) knownRegister.clear();
    knownRegister.set(krs, register);
  }

  async function getExtract(
    kind: 'OdpisAktualny' | 'OdpisPelny',
    krs: string,
    register: Register,
    signal?: AbortSignal,
  ): Promise<HttpResponse> {
    return http.request({
      url: joinUrl(root, `${kind}/${krs}`),
      query: { rejestr: register, format: 'json' },
      signal,
      label: `${kind}/${krs}?rejestr=${register}`,
    });
  }

  async function fetchSnapshot(rawKrs: string, opts?: { signal?: AbortSignal }): Promise<CompanySnapshot | null> {
    const krs = normalizeKrs(rawKrs);
    if (!krs) throw new MalformedPayloadError('krs', rawKrs, 'not a KRS number');
    const remembered = knownRegister.get(krs);
    const order = remembered ? [remembered, ...REGISTERS.filter((r) => r !== remembered)] : REGISTERS;
    for (const register of order) {
      if (options.extract === 'full') {
        const full = await getExtract('OdpisPelny', krs, register, opts?.signal);
        if (full.status === 404 || full.status === 204) continue;
        if (full.status !== 200) throw new UpstreamResponseError('krs', full.status, `krs ${krs}: OdpisPelny answered HTTP ${full.status}`);
        rememberRegister(krs, register);
        return mapKrsExtract(parseJson(full, krs), krs);
      }
      const current = await getExtract('OdpisAktualny', krs, register, opts?.signal);
      if (current.status === 404) continue;
      if (current.status === 200) {
        rememberRegister(krs, register);
        return mapKrsExtract(parseJson(current, krs), krs);
      }
      if (current.status === 204) {
        // No current extract: the entity was deleted; its full extract still holds its last state.
        const full = await getExtract('OdpisPelny', krs, register, opts?.signal);
        if (full.status === 200) {
          rememberRegister(krs, register);
          return mapKrsExtract(parseJson(full, krs), krs);
        }
        throw new UpstreamResponseError(
          'krs',
          full.status,
          `krs ${krs}: no current extract (204) and the full extract answered HTTP ${full.status}`,
        );
      }
      throw new UpstreamResponseError('krs', current.status, `krs ${krs}: OdpisAktualny answered HTTP ${current.status}`);
    }
    return null;
  }

  async function changedKrsNumbers(date: string, opts?: { signal?: AbortSignal }): Promise<string[]> {
    if (!ISO_DATE.test(date)) throw new RangeError(`date must be YYYY-MM-DD, got ${date}`);
    const response = await http.request({ url: joinUrl(root, `Biuletyn/${date}`), signal: opts?.signal });
    if (response.status === 204) return [];
    if (response.status !== 200) {
      throw new SourceUnavailableError('krs', `krs Biuletyn/${date}: HTTP ${response.status}`, { reason: 'http', status: response.status });
    }
    try {
      return parseBulletin(parseJson(response, `Biuletyn/${date}`), date);
    } catch (error) {
      // Without a readable bulletin the day cannot be run at all.
      throw new SourceUnavailableError('krs', `krs Biuletyn/${date}: ${(error as Error).message}`, { reason: 'service', cause: error });
    }
  }

  return {
    name: 'krs',
    maxBackfillDays: MAX_BACKFILL_DAYS.krs,
    changedKrsNumbers,
    fetchSnapshot,
    async *snapshotsForDate(date, opts) {
      const numbers = await changedKrsNumbers(date, opts);
      logger.info({ source: 'krs', date, changed: numbers.length }, 'KRS bulletin read');
      yield* fetchEntities(numbers, { concurrency, onEntityError, identify: (krs) => krs }, async (krs) => {
        const snapshot = await fetchSnapshot(krs, opts);
        if (!snapshot) throw new EntityNotFoundError('krs', krs, `krs ${krs}: in the bulletin but in neither register P nor S`);
        return snapshot;
      });
    },
    async lookup(identifier: Identifier, opts) {
      // The KRS API is keyed by KRS number only; NIP/REGON are resolved through BIR or VAT.
      if (identifier.type !== 'KRS') return null;
      return fetchSnapshot(identifier.value, opts);
    },
    close: () => http.close(),
  };
}
