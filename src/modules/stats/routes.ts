import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../../db/database.ts';
import { NotFoundError, ValidationError } from '../../lib/errors.ts';
import { errorResponses } from '../../http/schemas.ts';
import { getDayStats, getRangeStats, isIsoDate } from './service.ts';

const StatsData = Type.Object({ new: Type.Integer(), updated: Type.Integer(), deleted: Type.Integer(), total: Type.Integer() });
const DateParams = Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }) });

/** Any malformed date (a NUL in it, too: the text guard leaves these parameters to this check) is a 422 on `date`. */
function checkDate(date: string): void {
  if (!isIsoDate(date)) throw new ValidationError({ date: ['The date field must be a valid date in the format YYYY-MM-DD.'] });
}

/** Public registry statistics: no authentication, 10 requests a minute per client IP. */
export function statsRoutes(deps: { db: Db }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/stats/day/:date',
      {
        config: { auth: 'none', rateLimitGroup: 'stats', guardParamText: false },
        schema: {
          tags: ['Statistics'],
          summary: 'Registry activity of one day',
          description:
            'From the daily run of that date: companies first seen (`new`), companies with at least one event (`updated`), companies that became deleted (`deleted`), companies known at the end of the day (`total`). A day without a run: 404.',
          params: DateParams,
          response: {
            200: Type.Object({
              meta: Type.Object({
                date: Type.String(),
                type: Type.Literal('daily_snapshot'),
                source: Type.String(),
                description: Type.String(),
              }),
              data: StatsData,
            }),
            ...errorResponses({ validation: true, notFound: true }),
          },
        },
      },
      async (req) => {
        checkDate(req.params.date);
        const body = await getDayStats(deps.db, req.params.date);
        if (!body) throw new NotFoundError(`No daily run on ${req.params.date}.`);
        return body;
      },
    );

    app.get(
      '/stats/range/:date',
      {
        config: { auth: 'none', rateLimitGroup: 'stats', guardParamText: false },
        schema: {
          tags: ['Statistics'],
          summary: 'Registry activity of the 30 days ending at a date',
          description:
            'Clamped to the days that have runs: `from_date`/`to_date` are the first and last such days; counts are summed and `total` is that of `to_date`. No run in the window: 404.',
          params: DateParams,
          response: {
            200: Type.Object({
              meta: Type.Object({ from_date: Type.String(), to_date: Type.String(), source: Type.String(), description: Type.String() }),
              data: StatsData,
            }),
            ...errorResponses({ validation: true, notFound: true }),
          },
        },
      },
      async (req) => {
        checkDate(req.params.date);
        const body = await getRangeStats(deps.db, req.params.date);
        if (!body) throw new NotFoundError(`No daily run in the 30 days ending ${req.params.date}.`);
        return body;
      },
    );
  };
}
