import type { Clock } from '../../../lib/clock.ts';
import { silentLog, type Log } from '../../../logger.ts';
import { parseIdentifier } from '../../../lib/identifiers.ts';
import type { CompanySnapshot, Identifier } from '../../model.ts';
import type { RegistrySource } from '../source.ts';
import {
  EntityNotFoundError,
  MalformedPayloadError,
  SourceConfigError,
  SourceUnavailableError,
  type EntityErrorHandler,
} from '../errors.ts';
import { createHttpClient, defaultEntityErrorHandler, fetchEntities, trimBaseUrl, type RateLimitRule, type RetryPolicy } from '../http.ts';
import { BirClient } from './bir-client.ts';
import {
  BirServiceError,
  mapLegalEntity,
  mapNaturalPerson,
  readSearchHits,
  reportNames,
  SUMMARY_REPORTS,
  type SearchHit,
} from './bir-reports.ts';
import { field, type BirRow, type SearchParameter } from './bir-soap.ts';
import { MAX_BACKFILL_DAYS } from '../backfill.ts';

/**
 * GUS REGON through BIR1.1/1.2: lookup by NIP, REGON or KRS with the full reports of legal
 * persons and of natural persons' businesses, and the daily run from the summary reports of
 * new, updated and deleted entities and local units.
 */

export const BIR_PRODUCTION_URL = 'https://wyszukiwarkaregon.stat.gov.pl/wsBIR/UslugaBIRzewnPubl.svc';
export const BIR_TEST_URL = 'https://wyszukiwarkaregontest.stat.gov.pl/wsBIR/UslugaBIRzewnPubl.svc';
/** GUS's public key for the test environment (no registration; frozen, anonymised data). */
export const BIR_TEST_KEY = 'abcde12345abcde12345';

/**
 * Per-user limits of the GUS technical instruction (2024). The daytime values are the strictest
 * and apply all day, which keeps a run safe whenever it starts.
 */
export const BIR_RATE_LIMITS: RateLimitRule[] = [
  { limit: 3, windowMs: 1_000 },
  { limit: 120, windowMs: 60_000 },
  { limit: 6_000, windowMs: 3_600_000 },
];

export interface BirSourceOptions {
  /** The service endpoint as GUS documents it (the `.svc` URL). */
  baseUrl: string;
  /** Optional only for the test environment, which has a documented public key. */
  apiKey?: string;
  /** Report family of full reports; BIR12 names carry the PKD version (production since 2025). */
  reportVersion?: 'BIR11' | 'BIR12';
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  rateLimits?: RateLimitRule[];
  /** Fetch local units for entities that have them (one more call each). */
  includeLocalUnits?: boolean;
  sessionMaxAgeMs?: number;
  busyDelayMs?: number;
  logger?: Log;
  clock?: Clock;
  onEntityError?: EntityErrorHandler;
}

export interface BirSource extends RegistrySource {
  readonly name: 'bir';
  readonly client: BirClient;
  /** Distinct REGON9 numbers of the day's summary reports (local units map to their parent). */
  changedRegons(date: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  /** Search rows for an identifier, then the full reports that match the entity's type. */
  fetchSnapshot(parameter: SearchParameter, value: string, options?: { signal?: AbortSignal }): Promise<CompanySnapshot | null>;
  close(): Promise<void>;
}

const SEARCH_PARAMETER: Record<Identifier['type'], SearchParameter> = { NIP: 'Nip', REGON9: 'Regon', KRS: 'Krs' };
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

function isTestEnvironment(url: string): boolean {
  try {
    return new URL(url).hostname === new URL(BIR_TEST_URL).hostname;
  } catch {
    return false;
  }
}

function isCivilPartnership(row: BirRow): boolean {
  return field(row, 'szczegolnaFormaPrawna_Symbol') === '019' || /CYWILN/i.test(field(row, 'szczegolnaFormaPrawna_Nazwa'));
}

export function createBirSource(options: BirSourceOptions): BirSource {
  if (!options.baseUrl?.trim()) throw new SourceConfigError('bir', 'BIR_API_URL (the GUS BIR service URL) is not set');
  const endpoint = trimBaseUrl(options.baseUrl);
  const apiKey = options.apiKey?.trim() || (isTestEnvironment(endpoint) ? BIR_TEST_KEY : '');
  if (!apiKey) throw new SourceConfigError('bir', 'BIR_API_KEY (the GUS BIR user key) is not set');
  const logger = options.logger ?? silentLog;
  const onEntityError = options.onEntityError ?? defaultEntityErrorHandler('bir', logger);
  const names = reportNames(options.reportVersion ?? 'BIR12');
  const includeUnits = options.includeLocalUnits ?? true;
  const http = createHttpClient({
    source: 'bir',
    timeoutMs: options.timeoutMs ?? 30_000,
    retry: options.retry,
    rateLimits: options.rateLimits ?? BIR_RATE_LIMITS,
    // One session, one caller at a time: GUS ties sessions to the client and counts every call.
    maxConcurrent: 1,
    logger,
  });
  const client = new BirClient({
    endpoint,
    apiKey,
    http,
    clock: options.clock,
    logger,
    sessionMaxAgeMs: options.sessionMaxAgeMs,
    busyDelayMs: options.busyDelayMs,
  });

  /** A report that may legitimately be absent (no PKD for old deletions, no partners, …). */
  async function optionalReport(regon: string, report: string, absentCodes: number[], signal?: AbortSignal): Promise<BirRow[]> {
    try {
      return await client.fullReport(regon, report, signal);
    } catch (error) {
      if (error instanceof BirServiceError && absentCodes.includes(error.code)) return [];
      throw error;
    }
  }

  async function legalEntity(hit: SearchHit, signal?: AbortSignal): Promise<CompanySnapshot> {
    const [general] = await client.fullReport(hit.regon, names.legal, signal);
    if (!general) throw new MalformedPayloadError('bir', hit.regon, `${names.legal} returned no rows`);
    const pkd = await optionalReport(hit.regon, names.legalPkd, [4, 11], signal);
    const unitCount = Number(field(general, 'liczbaJednLokalnych', 'jednostekLokalnych')) || 0;
    const units = includeUnits && unitCount > 0 ? await optionalReport(hit.regon, names.legalUnits, [4], signal) : [];
    const partners = isCivilPartnership(general) ? await optionalReport(hit.regon, names.legalPartners, [4, 21, 22], signal) : [];
    return mapLegalEntity({ general, pkd, units, partners });
  }

  async function naturalPerson(hits: SearchHit[], fallbackNip: string | undefined, signal?: AbortSignal): Promise<CompanySnapshot> {
    const regon = hits[0]!.regon;
    const [general] = await optionalReport(regon, names.natural, [4], signal);
    const businesses: Array<{ silo: number; row: BirRow }> = [];
    for (const silo of [...new Set(hits.map((h) => h.silo))]) {
      const report = names.silo[silo];
      if (!report) continue;
      const [row] = await optionalReport(regon, report, [4], signal);
      if (row) businesses.push({ silo, row });
    }
    if (businesses.length === 0) throw new MalformedPayloadError('bir', regon, 'no business report of the natural person could be read');
    const pkd = await optionalReport(regon, names.naturalPkd, [4, 11], signal);
    const unitCount = Number(field(general, 'liczbaJednLokalnych')) || 0;
    const units = includeUnits && unitCount > 0 ? await optionalReport(regon, names.naturalUnits, [4], signal) : [];
    return mapNaturalPerson({ general: general ?? null, businesses, pkd, units, fallback: { regon, nip: hits[0]!.nip || fallbackNip } });
  }

  async function snapshotFromHits(rows: BirRow[], fallbackNip: string | undefined, signal?: AbortSignal): Promise<CompanySnapshot | null> {
    const hits = readSearchHits(rows);
    const legal = hits.find((h) => h.type === 'P');
    if (legal) return legalEntity(legal, signal);
    const natural = hits.filter((h) => h.type === 'F');
    if (natural.length > 0)
      return naturalPerson(
        natural.filter((h) => h.regon === natural[0]!.regon),
        fallbackNip,
        signal,
      );
    // Only local units matched (a REGON14 was asked): the parent entity is the company.
    const unit = hits.find((h) => h.type === 'LP' || h.type === 'LF');
    if (unit && unit.regon.length === 14) return fetchSnapshot('Regon', unit.regon.slice(0, 9), { signal });
    return null;
  }

  async function fetchSnapshot(
    parameter: SearchParameter,
    value: string,
    opts?: { signal?: AbortSignal },
  ): Promise<CompanySnapshot | null> {
    const rows = await client.search(parameter, value, opts?.signal);
    if (rows.length === 0) return null;
    return snapshotFromHits(rows, parameter === 'Nip' ? value : undefined, opts?.signal);
  }

  async function changedRegons(date: string, opts?: { signal?: AbortSignal }): Promise<string[]> {
    if (!ISO_DATE.test(date)) throw new RangeError(`date must be YYYY-MM-DD, got ${date}`);
    const seen = new Set<string>();
    for (const report of Object.values(SUMMARY_REPORTS)) {
      let rows: BirRow[];
      try {
        rows = await client.summaryReport(date, report, opts?.signal);
      } catch (error) {
        // Without readable summary reports the day cannot be run at all.
        if (error instanceof MalformedPayloadError || error instanceof BirServiceError) {
          throw new SourceUnavailableError('bir', `bir ${report} ${date}: ${error.message}`, { reason: 'service', cause: error });
        }
        throw error;
      }
      for (const row of rows) {
        const regon = field(row, 'regon');
        // A local unit's change is a change of its parent's units.
        if (/^\d{9}(\d{5})?$/.test(regon)) seen.add(regon.slice(0, 9));
      }
    }
    return [...seen];
  }

  return {
    name: 'bir',
    maxBackfillDays: MAX_BACKFILL_DAYS.bir,
    client,
    changedRegons,
    fetchSnapshot,
    async *snapshotsForDate(date, opts) {
      const regons = await changedRegons(date, opts);
      logger.info({ source: 'bir', date, changed: regons.length }, 'BIR summary reports read');
      yield* fetchEntities(regons, { concurrency: 1, onEntityError, identify: (r) => r }, async (regon) => {
        const snapshot = await fetchSnapshot('Regon', regon, opts);
        if (!snapshot) throw new EntityNotFoundError('bir', regon, `bir ${regon}: in the summary reports but not found by search`);
        return snapshot;
      });
    },
    async lookup(identifier, opts) {
      const parsed = parseIdentifier(identifier.type, identifier.value);
      if (!parsed.ok) return null;
      return fetchSnapshot(SEARCH_PARAMETER[identifier.type], parsed.value, opts);
    },
    async close() {
      await client.logout();
      await http.close();
    },
  };
}
