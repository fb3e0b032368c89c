import type { FastifyRequest } from 'fastify';

/**
 * `identifier_type` in any letter case, with spaces around: the add and remove lists take `nip`
 * (their service reads the type itself), so the snapshot (body) and a company's events (query)
 * take it too rather than answering 422 to what the other routes accept. A preValidation hook:
 * the schema's enum then sees `NIP`.
 */
export function identifierTypeAnyCase(part: 'body' | 'query') {
  return async (request: FastifyRequest): Promise<void> => {
    const input = request[part] as Record<string, unknown> | null | undefined;
    if (input && typeof input === 'object' && typeof input.identifier_type === 'string')
      input.identifier_type = input.identifier_type.trim().toUpperCase();
  };
}
