import type { Clock } from '../../lib/clock.ts';
import type { Log } from '../../logger.ts';
import type { RegistrySource } from './source.ts';
import { SourceConfigError, type EntityErrorHandler } from './errors.ts';
import { createKrsSource } from './krs/krs-source.ts';
import { createBirSource } from './bir/bir-source.ts';
import { createCeidgSource } from './ceidg/ceidg-source.ts';
import { createVatSource, type VatRequestRecord } from './vat/vat-source.ts';

/**
 * Builds the live registry connectors named in REGISTRY_SOURCES from the configuration. The
 * `file:` and `synthetic` sources are built elsewhere; their names are skipped here so the
 * composition root can pass the whole list.
 */

export const LIVE_SOURCE_NAMES = ['krs', 'bir', 'ceidg', 'vat'] as const;
export type LiveSourceName = (typeof LIVE_SOURCE_NAMES)[number];

export interface RegistrySourcesConfig {
  krsApiUrl?: string;
  birApiUrl?: string;
  birApiKey?: string;
  ceidgApiUrl?: string;
  ceidgApiToken?: string;
  vatApiUrl?: string;
}

export interface RegistrySourcesDeps {
  logger?: Log;
  clock?: Clock;
  /** Entity-level problems of daily runs (default: a warning in the log). */
  onEntityError?: EntityErrorHandler;
  /** The NIPs the VAT white list re-checks on a daily run (it has no change feed). */
  vatNipsToRefresh?: (date: string) => AsyncIterable<string> | Iterable<string>;
  /** The white list's request ids (proof of each check). */
  onVatRequestId?: (record: VatRequestRecord) => void;
}

function required(value: string | undefined, source: LiveSourceName, variable: string): string {
  if (!value?.trim()) throw new SourceConfigError(source, `${variable} is required for the ${source} source`);
  return value;
}

function isHandledElsewhere(name: string): boolean {
  return name === 'synthetic' || name.startsWith('synthetic:') || name.startsWith('file:') || name === 'file';
}

export function createRegistrySources(
  config: RegistrySourcesConfig,
  names: readonly string[],
  deps: RegistrySourcesDeps = {},
): RegistrySource[] {
  const { logger, clock, onEntityError } = deps;
  const sources: RegistrySource[] = [];
  for (const raw of new Set(names.map((n) => n.trim()).filter(Boolean))) {
    if (isHandledElsewhere(raw)) continue;
    switch (raw) {
      case 'krs':
        sources.push(createKrsSource({ baseUrl: required(config.krsApiUrl, 'krs', 'KRS_API_URL'), logger, onEntityError }));
        break;
      case 'bir': {
        const baseUrl = required(config.birApiUrl, 'bir', 'BIR_API_URL');
        // The key may be left out only for GUS's test environment; createBirSource knows its key.
        sources.push(createBirSource({ baseUrl, apiKey: config.birApiKey, logger, clock, onEntityError }));
        break;
      }
      case 'ceidg':
        sources.push(
          createCeidgSource({
            baseUrl: required(config.ceidgApiUrl, 'ceidg', 'CEIDG_API_URL'),
            token: required(config.ceidgApiToken, 'ceidg', 'CEIDG_API_TOKEN'),
            logger,
            onEntityError,
          }),
        );
        break;
      case 'vat':
        sources.push(
          createVatSource({
            baseUrl: required(config.vatApiUrl, 'vat', 'VAT_API_URL'),
            nipsToRefresh: deps.vatNipsToRefresh,
            onRequestId: deps.onVatRequestId,
            logger,
            clock,
            onEntityError,
          }),
        );
        break;
      default:
        throw new Error(`Unknown registry source "${raw}" (live sources: ${LIVE_SOURCE_NAMES.join(', ')})`);
    }
  }
  return sources;
}

/** The live connectors REGISTRY_SOURCES names (the on-demand import asks these); `synthetic` and `file:` are skipped. */
export function createLiveSources(
  config: RegistrySourcesConfig & { registrySources: readonly string[] },
  deps: RegistrySourcesDeps = {},
): RegistrySource[] {
  return createRegistrySources(
    config,
    config.registrySources.filter((name) => !isHandledElsewhere(name)),
    deps,
  );
}

export { createKrsSource, createBirSource, createCeidgSource, createVatSource };
export {
  SourceUnavailableError,
  SourceConfigError,
  SourceDateOutOfRangeError,
  MalformedPayloadError,
  EntityNotFoundError,
} from './errors.ts';
