/**
 * Every failure the API answers with, as one class per status a caller handles differently. All
 * are `RegwatchError`s carrying the HTTP status, a stable `code`, the API's message, the 422
 * `errors` map (field -> messages) and the raw body.
 */

export type ValidationErrors = Record<string, string[]>;

export interface RegwatchErrorInit {
  status: number;
  code: string;
  message: string;
  errors?: ValidationErrors;
  body?: unknown;
  requestId?: string;
  retryAfterMs?: number;
}

export class RegwatchError extends Error {
  /** HTTP status (0 when no answer arrived: network failure or timeout). */
  readonly status: number;
  /** `UNAUTHORIZED`, `FORBIDDEN`, `INSUFFICIENT_CREDITS` (the API's own), or one derived from the status: `VALIDATION_FAILED`, `NOT_FOUND`, `RATE_LIMITED`, ... */
  readonly code: string;
  /** The 422 map of field -> messages, e.g. `{ "identifier_value.3": ["..."] }`; `{}` otherwise. */
  readonly errors: ValidationErrors;
  /** The response body as parsed (JSON, or the text when it was not JSON). */
  readonly body: unknown;
  /** The `x-request-id` of the answer: quote it when asking for help. */
  readonly requestId: string | undefined;
  /** The delay the server asked for (`Retry-After`), on 429 and 503. */
  readonly retryAfterMs: number | undefined;

  constructor(init: RegwatchErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.errors = init.errors ?? {};
    this.body = init.body;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** 401: the token is missing, unknown, revoked or expired. */
export class AuthenticationError extends RegwatchError {}
/** 403: an API token on a route that needs the Master Token. */
export class PermissionError extends RegwatchError {}
/** 402: the wallet holds fewer credits than the call costs. */
export class InsufficientCreditsError extends RegwatchError {
  get balance(): number | undefined {
    return numberField(this.body, 'balance');
  }

  get required(): number | undefined {
    return numberField(this.body, 'required');
  }
}
/** 404: no such resource (or another account's). */
export class NotFoundError extends RegwatchError {}
/** 422: the request was understood but a field is wrong; see `errors`. */
export class ValidationError extends RegwatchError {}
/** 429 after the retries ran out. */
export class RateLimitError extends RegwatchError {}
/** 503 after the retries ran out (a registry could not be asked, the service is closing). */
export class ServiceUnavailableError extends RegwatchError {}
/** No answer: the connection failed or the request timed out. */
export class ConnectionError extends RegwatchError {}

const CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'INSUFFICIENT_CREDITS',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_FAILED',
  429: 'RATE_LIMITED',
  500: 'SERVER_ERROR',
  502: 'UPSTREAM_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

const CLASSES: Record<number, typeof RegwatchError> = {
  401: AuthenticationError,
  402: InsufficientCreditsError,
  403: PermissionError,
  404: NotFoundError,
  422: ValidationError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The typed error for an answer that was not a success. */
export function errorFromResponse(response: Response, body: unknown): RegwatchError {
  const status = response.status;
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const message =
    typeof b.message === 'string'
      ? b.message
      : typeof b.error === 'string'
        ? b.error
        : typeof body === 'string' && body
          ? body
          : `HTTP ${status}`;
  const code = typeof b.code === 'string' ? b.code : (CODES[status] ?? `HTTP_${status}`);
  const errors = b.errors && typeof b.errors === 'object' ? (b.errors as ValidationErrors) : undefined;
  const Class = CLASSES[status] ?? RegwatchError;
  return new Class({
    status,
    code,
    message,
    errors,
    body,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
  });
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function numberField(body: unknown, key: string): number | undefined {
  const v = body && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
  return typeof v === 'number' ? v : undefined;
}
