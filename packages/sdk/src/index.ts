export { Regwatch, type RegwatchOptions } from './client.ts';
export { SEARCH_MAX_PAGES } from './companies.ts';
export {
  AuthenticationError,
  ConnectionError,
  InsufficientCreditsError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  RegwatchError,
  ServiceUnavailableError,
  ValidationError,
  type ValidationErrors,
} from './errors.ts';
export type { CallOptions } from './core.ts';
export type { StreamOptions } from './events.ts';
export type { FetchLike, RetryOptions } from './transport.ts';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders } from './verify-webhook.ts';
export type * from './types.ts';
