import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  ForbiddenError,
  InsufficientCreditsError,
  NotFoundError,
  TemporarilyUnavailableError,
  UnauthorizedError,
  UpstreamError,
  ValidationError,
} from '../../lib/errors.ts';
import { plural } from './summaries.ts';

/**
 * Tool errors (docs/mcp.md, "Errors"): `isError: true`, the REST error's message as the first
 * text, and the REST error body (with its HTTP status) as structuredContent. The mapping mirrors
 * src/http/error-handler.ts; an error it does not know is the caller's to log as a 500.
 */

/** The error a REST route would answer, as data: status, the message and the body's other fields. */
export interface ToolErrorBody {
  status: number;
  message: string;
  code?: string;
  errors?: Record<string, string[]>;
  balance?: number;
  required?: number;
}

export function toolErrorBody(e: unknown): ToolErrorBody | null {
  if (e instanceof ValidationError) return { status: 422, message: e.message, errors: e.errors };
  if (e instanceof UnauthorizedError) return { status: 401, message: e.message, code: 'UNAUTHORIZED' };
  if (e instanceof ForbiddenError) return { status: 403, message: e.message, code: 'FORBIDDEN' };
  if (e instanceof InsufficientCreditsError)
    return { status: 402, message: e.message, code: 'INSUFFICIENT_CREDITS', balance: e.balance, required: e.required };
  if (e instanceof NotFoundError) return { status: 404, message: e.message };
  if (e instanceof TemporarilyUnavailableError) return { status: 503, message: e.message };
  if (e instanceof UpstreamError) return { status: 502, message: e.message };
  return null;
}

function errorDetail(body: ToolErrorBody): string | null {
  if (body.status === 402)
    return `Balance: ${plural(body.balance ?? 0, 'credit')}; this call needs ${plural(body.required ?? 0, 'credit')}. Top up the wallet (POST /api/v1/wallet/topup) and call again.`;
  if (body.errors)
    return Object.entries(body.errors)
      .map(([field, texts]) => `${field}: ${texts.join(' ')}`)
      .join('\n');
  return null;
}

export function toolError(body: ToolErrorBody): CallToolResult {
  const detail = errorDetail(body);
  return {
    isError: true,
    content: [{ type: 'text', text: body.message }, ...(detail ? [{ type: 'text' as const, text: detail }] : [])],
    structuredContent: { error: body },
  };
}
