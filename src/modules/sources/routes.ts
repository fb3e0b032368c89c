import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/schemas.ts';
import { SourcesResponseSchema } from './schema.ts';
import type { SourcesService } from './service.ts';

/** Source health: public, under the unauthenticated per-IP rate limit (docs/sources.md). */
export function sourcesRoutes(deps: { service: SourcesService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/sources',
      {
        config: { auth: 'none' },
        schema: {
          tags: ['Sources'],
          summary: 'Freshness and health of each registry source',
          description:
            'Per source (krs, bir, ceidg, vat, and synthetic or file when configured or when they ran): whether the scheduler runs it, its health, ' +
            'the latest day with a completed daily run, its most recent run with counts, the due days of the last 30 without a completed run (`gaps`), ' +
            'and how many companies hold a profile from it. A day is due once its scheduled run (03:00 UTC the next day) has had three hours to finish. ' +
            'No credential; the unauthenticated per-IP rate limit applies.',
          response: { 200: SourcesResponseSchema, ...errorResponses() },
        },
      },
      async () => ({ status: 'success' as const, data: await deps.service.list() }),
    );
  };
}
