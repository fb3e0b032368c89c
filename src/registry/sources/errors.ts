import type { SourceName } from '../model.ts';

/**
 * Typed errors of the registry connectors. The daily pipeline needs one distinction above all:
 * `SourceUnavailableError` means the run for that day failed and must be repeated; every other
 * error concerns one entity (reported through `onEntityError`) or a configuration mistake.
 */

export class SourceError extends Error {
  readonly source: SourceName;
  constructor(source: SourceName, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceError';
    this.source = source;
  }
}

export type UnavailableReason = 'network' | 'timeout' | 'http' | 'auth' | 'rate_limited' | 'service';

/** The upstream registry cannot be used right now; the caller records the run as failed. */
export class SourceUnavailableError extends SourceError {
  readonly reason: UnavailableReason;
  /** HTTP status of the last attempt, when there was one. */
  readonly status: number | undefined;
  constructor(source: SourceName, message: string, options: { reason: UnavailableReason; status?: number; cause?: unknown }) {
    super(source, message, { cause: options.cause });
    this.name = 'SourceUnavailableError';
    this.reason = options.reason;
    this.status = options.status;
  }
}

/** A missing base URL, key or token: nothing can work until the configuration is fixed. */
export class SourceConfigError extends SourceError {
  constructor(source: SourceName, message: string) {
    super(source, message);
    this.name = 'SourceConfigError';
  }
}

/** The registry cannot serve the requested day at all (e.g. GUS keeps only the last 7 days). */
export class SourceDateOutOfRangeError extends SourceError {
  readonly date: string;
  constructor(source: SourceName, date: string, message: string, options?: { cause?: unknown }) {
    super(source, message, options);
    this.name = 'SourceDateOutOfRangeError';
    this.date = date;
  }
}

/** The upstream answered, but with something that cannot be read as the documented payload. */
export class MalformedPayloadError extends SourceError {
  readonly identifier: string;
  constructor(source: SourceName, identifier: string, message: string, options?: { cause?: unknown }) {
    super(source, `${source} ${identifier}: ${message}`, options);
    this.name = 'MalformedPayloadError';
    this.identifier = identifier;
  }
}

/** An HTTP answer the connector did not expect for one entity (e.g. a 400 for one identifier). */
export class UpstreamResponseError extends SourceError {
  readonly status: number;
  readonly code: string | undefined;
  constructor(source: SourceName, status: number, message: string, options?: { code?: string; cause?: unknown }) {
    super(source, message, { cause: options?.cause });
    this.name = 'UpstreamResponseError';
    this.status = status;
    this.code = options?.code;
  }
}

/** The entity exists in the change feed but the registry no longer has it. */
export class EntityNotFoundError extends SourceError {
  readonly identifier: string;
  constructor(source: SourceName, identifier: string, message?: string) {
    super(source, message ?? `${source} ${identifier}: not found`);
    this.name = 'EntityNotFoundError';
    this.identifier = identifier;
  }
}

/** Entity-level problems are reported here; run-level problems are thrown. */
export type EntityErrorHandler = (identifier: string, error: Error) => void;

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR');
}

/** Errors that must stop a daily run rather than be reported for one entity. */
export function isRunFatal(error: unknown): boolean {
  return (
    error instanceof SourceUnavailableError ||
    error instanceof SourceConfigError ||
    error instanceof SourceDateOutOfRangeError ||
    isAbortError(error)
  );
}
