/**
 * The few typed errors services throw. One error handler (error-handler.ts) turns each into the
 * body the specification fixes for its status.
 */
export class AppError extends Error {
  constructor(readonly statusCode: number, message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** 422 `{message, errors: {field: [text, ...]}}`; `message` is derived from the errors. */
export class ValidationError extends AppError {
  constructor(readonly errors: Record<string, string[]>, message?: string) {
    super(422, message ?? summarizeErrors(errors));
  }
}

/** 401 `{error, code: "UNAUTHORIZED"}`. */
export class UnauthorizedError extends AppError {
  constructor(message: 'Missing API token' | 'Malformed token format' | 'Invalid API token' | 'Token revoked' | 'Token expired') {
    super(401, message);
  }
}

/** 403 `{error, code: "FORBIDDEN"}`. */
export class ForbiddenError extends AppError {
  constructor(message = 'This operation requires the Master Token') {
    super(403, message);
  }
}

/** 404 `{message}`. */
export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}

/** 402 `{message, code, balance, required}`. */
export class InsufficientCreditsError extends AppError {
  constructor(readonly balance: number, readonly required: number) {
    super(402, 'Insufficient credits');
  }
}

/** `message` is the first error text, plus ` (and 1 more error)` / ` (and N more errors)`. */
export function summarizeErrors(errors: Record<string, string[]>): string {
  const all = Object.values(errors).flat();
  if (all.length === 0) return 'The given data was invalid.';
  const rest = all.length - 1;
  return rest === 0 ? all[0] : `${all[0]} (and ${rest} more error${rest === 1 ? '' : 's'})`;
}
