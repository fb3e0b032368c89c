import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses, MessageSchema } from '../../http/schemas.ts';
import { MatchBodySchema, MatchResponseSchema, MAX_MATCH_QUERIES, type MatchBody } from './schema.ts';
import type { MatchService } from './service.ts';

export function matchRoutes(deps: { match: MatchService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/companies/match',
      {
        config: {
          auth: 'any',
          price: 'companies.match',
          unitsOf: (req) => (req.body as MatchBody).queries.length,
          checkInput: (req) => deps.match.check((req.body as MatchBody).queries),
          bodyChecks: deps.match.bodyChecks,
        },
        schema: {
          tags: ['Companies'],
          summary: 'Match a list of names and addresses to companies',
          security: [{ bearer: [] }],
          description:
            `Batch entity resolution: 1 to ${MAX_MATCH_QUERIES} queries, each a name or an identifier (nip, regon, krs) plus optional city, postal code and street. ` +
            'Each query is answered with up to five candidates, best first, with a `score` from 0 to 1, `match: true` on the one the service bets on (at most one), ' +
            'and the `features` that agreed. Names match ignoring case, diacritics, punctuation, word order and legal-form words; an identifier that names a company wins outright. ' +
            'One credit per query, charged once the whole batch has been answered; a wallet that cannot pay for every query gets 402 and nothing is done. ' +
            'Just after the server starts, while its match index is built, 503. See docs/match.md.',
          body: MatchBodySchema,
          response: {
            200: MatchResponseSchema,
            503: Type.Ref(MessageSchema.$id!),
            ...errorResponses({ auth: 'any', validation: true, priced: true }),
          },
        },
      },
      async (req) => ({ status: 'success' as const, data: await deps.match.match(req.body.queries) }),
    );
  };
}
