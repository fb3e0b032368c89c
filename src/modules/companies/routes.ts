import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { reportCharge } from '../../http/pricing.ts';
import { errorResponses, MessageSchema } from '../../http/schemas.ts';
import { validationErrorsFromAjv } from '../../http/validation.ts';
import { ValidationError } from '../../lib/errors.ts';
import { MAX_SEARCH_PAGE, searchQueryErrors } from './filters.ts';
import { SearchQuerySchema, SearchResponseSchema, SnapshotBodySchema, SnapshotResponseSchema } from './schema.ts';
import type { CompaniesService } from './service.ts';
import { identifierTypeAnyCase } from '../../http/identifier-type.ts';

export function companyRoutes(deps: { companies: CompaniesService }): FastifyPluginAsyncTypebox {
  const { companies } = deps;
  return async (app) => {
    app.post(
      '/companies/snapshot',
      {
        // Charged by the service, in the statement that reads the company (one round trip).
        config: { auth: 'any', price: 'companies.snapshot', chargedBy: 'service', tokenCheckedByCharge: true },
        preValidation: identifierTypeAnyCase('body'),
        schema: {
          tags: ['Companies'],
          summary: 'The full profile of one company',
          security: [{ bearer: [] }],
          description:
            'Identity, one profile per registry (with `source`, `vat_status` and `bank_accounts`), and persons. ' +
            'A valid identifier of a company the service does not hold yet is looked up in the configured live registries first (on-demand import); ' +
            'still unknown: 404 `{message: "Company not found"}`. A registry that could not be asked: 503.',
          body: SnapshotBodySchema,
          response: {
            200: SnapshotResponseSchema,
            503: Type.Ref(MessageSchema.$id!),
            ...errorResponses({ auth: 'any', validation: true, notFound: true, priced: true }),
          },
        },
      },
      async (req, reply) => {
        const r = await companies.paidSnapshot(req.body.identifier_type, req.body.identifier_value, {
          ...req.auth!,
          cached: req.authCached,
        });
        reportCharge(reply, r.charged, r.balanceAfter);
        return r.body;
      },
    );

    app.get(
      '/companies/search',
      {
        // Charged by the service, in the statement that reads the page's companies (batched, one round trip).
        config: { auth: 'any', price: 'companies.search', chargedBy: 'service', tokenCheckedByCharge: true },
        // A schema error is answered with the value checks' errors beside it (searchQueryErrors).
        attachValidation: true,
        schema: {
          tags: ['Companies'],
          summary: 'Search the registry',
          security: [{ bearer: [] }],
          description:
            'Every filter is optional and they combine (AND). 20 results a page, ordered by `activity_start` newest first, then primary identifier; ' +
            '`total` is exact. `status` defaults to ACTIVE. Unknown parameters are ignored. ' +
            `A page past the last one answers 200 with no results; a page beyond ${MAX_SEARCH_PAGE} that would hold results (past the first 10,000) is refused (422 on \`page\`). ` +
            'Just after the server starts, while its search index is built, a search runs in SQL; one that takes over 10 s answers 503. See docs/search.md.',
          querystring: SearchQuerySchema,
          response: {
            200: SearchResponseSchema,
            503: Type.Ref(MessageSchema.$id!),
            ...errorResponses({ auth: 'any', validation: true, priced: true }),
          },
        },
      },
      async (req, reply) => {
        if (req.validationError) {
          const { validation, validationContext } = req.validationError as Error & { validation: never; validationContext?: string };
          throw new ValidationError(searchQueryErrors(req.query, validationErrorsFromAjv(validation, validationContext)));
        }
        const r = await companies.paidSearch(req.query, { ...req.auth!, cached: req.authCached });
        reportCharge(reply, r.charged, r.balanceAfter);
        // Already UTF-8 JSON (SearchResponseSchema's document, written from the held results' own): sent as it is.
        void reply.type('application/json; charset=utf-8');
        return r.body;
      },
    );
  };
}
