import type { FastifyRequest } from 'fastify';

/**
 * `identifier_type` in any letter case, with spaces around: the add and remove lists take `nip`
 * (their service reads the type itself), so the snapshot (body) and a company's events (query)
 * take it too rather than answering 422 to what the other routes accept. A preValidation hook:
 * the schema's enum then sees `NIP`. The MCP tools of those routes put their arguments right
 * with the same function.
 */
export function upperCaseIdentifierType(input: unknown): void {
  if (input && typeof input === 'object' && typeof (input as Record<string, unknown>).identifier_type === 'string') {
    const fields = input as { identifier_type: string };
    fields.identifier_type = fields.identifier_type.trim().toUpperCase();
  }
}

export function identifierTypeAnyCase(part: 'body' | 'query') {
  return async (request: FastifyRequest): Promise<void> => upperCaseIdentifierType(request[part]);
}
