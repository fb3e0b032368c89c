/**
 * The few typed errors the domain throws. They know nothing of HTTP: the one error handler
 * (src/http/error-handler.ts) maps each class to its status and the body docs/api-contract.md fixes.
 * A service can therefore be called from a route, a job, the CLI or the MCP server alike.
 */
export abstract class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Input that breaks a rule: `{message, errors: {field: [text, ...]}}`; `message` is derived from the errors. */
export class ValidationError extends DomainError {
  constructor(
    readonly errors: Record<string, string[]>,
    message?: string,
  ) {
    super(message ?? summarizeErrors(errors));
  }
}

/** No credential, or one that does not authenticate. */
export class UnauthorizedError extends DomainError {
  constructor(message: 'Missing API token' | 'Malformed token format' | 'Invalid API token' | 'Token revoked' | 'Token expired') {
    super(message);
  }
}

/** A valid credential that may not do this. */
export class ForbiddenError extends DomainError {
  constructor(message = 'This operation requires the Master Token') {
    super(message);
  }
}

/** The thing asked for does not exist (or belongs to another account). */
export class NotFoundError extends DomainError {}

/** The wallet cannot pay for the operation; nothing was done. */
export class InsufficientCreditsError extends DomainError {
  constructor(
    readonly balance: number,
    readonly required: number,
  ) {
    super('Insufficient credits');
  }
}

/** Something the operation needs (a registry, the search index, a lock) is briefly unavailable: try again later. */
export class TemporarilyUnavailableError extends DomainError {}

/** An outside provider the operation depends on (the payment provider) failed. */
export class UpstreamError extends DomainError {}

/** `message` is the first error text, plus ` (and 1 more error)` / ` (and N more errors)`. */
export function summarizeErrors(errors: Record<string, string[]>): string {
  const all = Object.values(errors).flat();
  if (all.length === 0) return 'The given data was invalid.';
  const rest = all.length - 1;
  return rest === 0 ? all[0] : `${all[0]} (and ${rest} more error${rest === 1 ? '' : 's'})`;
}
