import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The service's own pages (account recovery, the checkout) run no script, load nothing and post
 * only to themselves: their policy says so, and that no other site may frame them (a framed
 * "Confirm recovery" or "Pay" button is a click-jacking target). Swagger UI (`/docs`), which needs
 * its scripts, keeps none. Every answer is `nosniff`: a JSON body is never run as a script or page.
 *
 * Three fixed headers, written here: @fastify/helmet's defaults (a policy on every answer, the
 * cross-origin isolation headers) are made for a site, and would need undoing for the API and /docs.
 */
export const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function setSecurityHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-content-type-options', 'nosniff');
  const type = reply.getHeader('content-type');
  if (typeof type === 'string' && type.startsWith('text/html') && !request.url.startsWith('/docs')) {
    reply.header('content-security-policy', PAGE_POLICY);
    reply.header('x-frame-options', 'DENY');
  }
}
