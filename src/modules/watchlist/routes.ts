import { Type, type TSchema } from '@sinclair/typebox';
import { parseIdentifierList } from './identifier-list.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { QueryDateSchema, errorResponses, PathIdSchema, TimestampSchema } from '../../http/schemas.ts';
import { reportCharge } from '../../http/pricing.ts';
import { EVENT_SCOPES, EVENT_TYPES, IDENTIFIER_TYPES } from '../../registry/model.ts';
import { parseEventFilters, type EventFilterQuery } from './event-filters.ts';
import { parseCompanyEventsQuery, type CompanyEventsQuery, type EventsService } from './feed.ts';
import { MAX_IDENTIFIERS, MAX_VALUE_LENGTH } from './identifier-list.ts';
import { addMessage, type WatchlistService } from './service.ts';
import { identifierTypeAnyCase } from '../../http/identifier-type.ts';

const IdentifierTypeSchema = Type.Union(IDENTIFIER_TYPES.map((t) => Type.Literal(t)));

/**
 * The add and remove body. Validation is the service's (every value checked, errors keyed by
 * index, aliases honoured), so the schema documents the shape (both fields required, as the
 * specification marks them; a body naming them by their aliases is accepted too) and the route
 * attaches ajv's verdict instead of answering with it.
 */
const IdentifierListBody = Type.Object(
  {
    identifier_type: IdentifierTypeSchema,
    identifier_value: Type.Array(Type.String({ maxLength: MAX_VALUE_LENGTH }), {
      minItems: 1,
      maxItems: MAX_IDENTIFIERS,
      description: `Identifier values (at most ${MAX_IDENTIFIERS}). NIP with or without spaces, dashes or a PL prefix; KRS with or without leading zeros. Duplicates collapse.`,
    }),
    name: Type.Optional(Type.String({ maxLength: 10, description: 'Alias of `identifier_type` (sent instead of it).' })),
    value: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_VALUE_LENGTH }), {
        maxItems: MAX_IDENTIFIERS,
        description: 'Alias of `identifier_value` (sent instead of it).',
      }),
    ),
  },
  { examples: [{ identifier_type: 'NIP', identifier_value: ['5261040828', 'PL 779-243-35-27'] }] },
);

const SuccessEnvelope = <T extends TSchema>(data: T, meta: TSchema) => Type.Object({ success: Type.Literal(true), data, meta });
const StatusEnvelope = <T extends TSchema>(data: T, meta: TSchema) => Type.Object({ status: Type.Literal('success'), data, meta });

const PageMetaSchema = Type.Object({
  total: Type.Integer(),
  per_page: Type.Integer(),
  current_page: Type.Integer(),
  last_page: Type.Integer(),
});
const EventPageMetaSchema = Type.Object({ ...PageMetaSchema.properties, fetched_at: TimestampSchema });
const CursorMetaSchema = Type.Object({
  per_page: Type.Integer(),
  after_id: Type.Integer(),
  next_after_id: Type.Integer({ description: 'Pass as `after_id` to continue: the last id returned (or `after_id` when none was).' }),
  has_more: Type.Boolean(),
  fetched_at: TimestampSchema,
});

const NullableString = Type.Union([Type.String(), Type.Null()]);
const EventSchema = Type.Object({
  id: Type.Integer({ description: 'Extension: increases with detection order; `after_id` polls by it.' }),
  event_type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t))),
  old_value: NullableString,
  new_value: NullableString,
  event_date: Type.String({ description: 'YYYY-MM-DD: the date of the daily run that detected the change.' }),
  severity: Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]),
});
const FeedEventSchema = Type.Object({
  ...EventSchema.properties,
  primary_identifier: Type.String(),
  identifier_type: IdentifierTypeSchema,
  company_name: Type.String(),
});

const CommaList = (max: number, description: string) =>
  Type.Union([Type.String({ maxLength: max }), Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })], { description });
const FilterQuery = {
  event_type: Type.Optional(CommaList(1000, `One event type or a comma list (any of): ${EVENT_TYPES.join(', ')}.`)),
  scope: Type.Optional(CommaList(200, `An event group: ${Object.keys(EVENT_SCOPES).join(', ')}. With \`event_type\`, both must match.`)),
  from_date: Type.Optional(Type.String({ ...QueryDateSchema, description: 'Events dated on or after (YYYY-MM-DD; empty: no bound).' })),
  to_date: Type.Optional(Type.String({ ...QueryDateSchema, description: 'Events dated on or before (YYYY-MM-DD; empty: no bound).' })),
};
const PageQuery = {
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
};

export function watchlistRoutes(deps: { watchlist: WatchlistService; events: EventsService }): FastifyPluginAsyncTypebox {
  const { watchlist, events } = deps;
  return async (app) => {
    app.post(
      '/companies/add',
      {
        config: { auth: 'any', price: 'companies.add', chargedBy: 'service' },
        attachValidation: true,
        schema: {
          tags: ['Watchlist'],
          summary: 'Add companies to the watchlist',
          security: [{ bearer: [] }],
          description:
            'Asynchronous: 202 at once; known companies are watched within moments, unknown ones after an on-demand import from the live registries. One e-mail confirms which identifiers are now watched and which could not be found. Every value is validated first: any invalid one answers 422 naming it by index (`identifier_value.3`) and nothing is queued. Values already watched (or queued by an earlier request) are free; an identifier not found is refunded. `name` / `value` are accepted as aliases of `identifier_type` / `identifier_value`.',
          body: IdentifierListBody,
          response: {
            202: Type.Object({
              success: Type.Literal(true),
              message: Type.String(),
              request_id: Type.String({ description: 'Follow it with GET /watchlist/requests/{request_id}.' }),
              identifier_type: IdentifierTypeSchema,
              submitted: Type.Integer({ description: 'Values in the body.' }),
              duplicates: Type.Integer({ description: 'Values that collapsed into another (same stored form).' }),
              queued: Type.Integer({ description: 'Values newly queued: one credit each.' }),
              already_watched: Type.Integer(),
              already_queued: Type.Integer(),
              credits_charged: Type.Integer(),
            }),
            ...errorResponses({ auth: 'any', validation: true }),
          },
        },
      },
      async (req, reply) => {
        const { balanceAfter, ...out } = await watchlist.add(req.auth!.accountId, parseIdentifierList(req.body));
        reportCharge(reply, out.credits_charged, balanceAfter);
        return reply.code(202).send({ success: true as const, message: addMessage(out), ...out });
      },
    );

    app.get(
      '/companies/watched',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Watchlist'],
          summary: 'The watched companies, newest watch first (free)',
          security: [{ bearer: [] }],
          description:
            '`events_count` and `last_event_at` (the date of the latest event) count what the feed shows for the company: its events from the day it was watched.',
          querystring: Type.Object(PageQuery),
          response: {
            200: SuccessEnvelope(
              Type.Array(
                Type.Object({
                  primary_identifier: Type.String(),
                  name: Type.String(),
                  watched_since: Type.String({ description: 'YYYY-MM-DD (UTC).' }),
                  last_event_at: Type.Union([Type.String({ description: 'YYYY-MM-DD' }), Type.Null()]),
                  events_count: Type.Integer(),
                }),
              ),
              PageMetaSchema,
            ),
            ...errorResponses({ auth: 'any', validation: true }),
          },
        },
      },
      async (req) => {
        const { data, meta } = await watchlist.listWatched(req.auth!.accountId, req.query.page, req.query.per_page);
        return { success: true as const, data, meta };
      },
    );

    app.delete(
      '/companies/watched',
      {
        config: { auth: 'any' },
        attachValidation: true,
        schema: {
          tags: ['Watchlist'],
          summary: 'Remove companies from the watchlist',
          security: [{ bearer: [] }],
          description:
            'Same body as the add. Monitoring stops at once: the feed no longer shows the companies. Each value ends in `removed`, `not_watched` (a known company not on the list) or `not_found` (no such company), in its stored form. A value still queued by an add request that has not settled it is cancelled (never watched, refunded) and answers `removed`.',
          body: IdentifierListBody,
          response: {
            200: Type.Object({
              success: Type.Literal(true),
              data: Type.Object({
                removed: Type.Array(Type.String()),
                not_found: Type.Array(Type.String()),
                not_watched: Type.Array(Type.String()),
              }),
              meta: Type.Object({
                total: Type.Integer(),
                removed: Type.Integer(),
                not_found: Type.Integer(),
                not_watched: Type.Integer(),
                removed_at: TimestampSchema,
              }),
            }),
            ...errorResponses({ auth: 'any', validation: true }),
          },
        },
      },
      async (req) => {
        const r = await watchlist.remove(req.auth!.accountId, parseIdentifierList(req.body));
        return {
          success: true as const,
          data: { removed: r.removed, not_found: r.not_found, not_watched: r.not_watched },
          meta: {
            total: r.removed.length + r.not_found.length + r.not_watched.length,
            removed: r.removed.length,
            not_found: r.not_found.length,
            not_watched: r.not_watched.length,
            removed_at: r.removed_at,
          },
        };
      },
    );

    app.get(
      '/watchlist/requests/:request_id',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Watchlist'],
          summary: 'Follow an add request (extension, free)',
          description:
            "The progress of one add (the `request_id` of `POST /companies/add`): `queued` until every identifier was looked up, then `completed`, with each identifier's outcome and the credits charged and refunded (an identifier no source knows is refunded).",
          security: [{ bearer: [] }],
          params: Type.Object({ request_id: PathIdSchema() }),
          response: {
            200: Type.Object({
              success: Type.Literal(true),
              data: Type.Object({
                request_id: Type.String(),
                status: Type.Union([Type.Literal('queued'), Type.Literal('completed')]),
                identifier_type: IdentifierTypeSchema,
                submitted: Type.Integer(),
                queued: Type.Integer(),
                credits_charged: Type.Integer(),
                credits_refunded: Type.Integer(),
                created_at: TimestampSchema,
                completed_at: Type.Union([TimestampSchema, Type.Null()]),
                items: Type.Array(
                  Type.Object({
                    identifier_value: Type.String(),
                    status: Type.Union(
                      ['queued', 'watched', 'already_watched', 'already_queued', 'not_found', 'removed'].map((s) => Type.Literal(s)),
                    ),
                    primary_identifier: NullableString,
                    name: NullableString,
                  }),
                ),
              }),
            }),
            ...errorResponses({ auth: 'any', notFound: true }),
          },
        },
      },
      async (req) => ({ success: true as const, data: await watchlist.getRequest(req.auth!.accountId, req.params.request_id) }),
    );

    app.get(
      '/companies/events',
      {
        config: {
          auth: 'any',
          price: 'companies.events',
          checkInput: (req) => void parseCompanyEventsQuery(req.query as CompanyEventsQuery),
        },
        preValidation: identifierTypeAnyCase('query'),
        schema: {
          tags: ['Watchlist'],
          summary: "A company's events, watched or not",
          security: [{ bearer: [] }],
          description:
            'Every event detected for the company, newest first (`event_date`, then id). An identifier of no known company is looked up in the live registries first; still unknown: 404.',
          querystring: Type.Object({
            identifier_type: IdentifierTypeSchema,
            identifier_value: Type.String({ minLength: 1, maxLength: MAX_VALUE_LENGTH }),
            ...FilterQuery,
            ...PageQuery,
          }),
          response: {
            200: StatusEnvelope(
              Type.Object({
                company: Type.Object({ primary_identifier: Type.String(), identifier_type: IdentifierTypeSchema, name: Type.String() }),
                events: Type.Array(EventSchema),
              }),
              EventPageMetaSchema,
            ),
            ...errorResponses({ auth: 'any', validation: true, notFound: true }),
            503: Type.Ref('Message'),
          },
        },
      },
      async (req) => {
        const q = req.query;
        const r = await events.companyEvents(q);
        return { status: 'success' as const, data: r.data, meta: r.meta };
      },
    );

    app.get(
      '/watchlist/events',
      {
        config: { auth: 'any', price: 'watchlist.events', checkInput: (req) => void parseEventFilters(req.query as EventFilterQuery) },
        schema: {
          tags: ['Watchlist'],
          summary: 'The feed: events of the watched companies',
          security: [{ bearer: [] }],
          description:
            'Events of the companies on the watchlist, from the day each was watched. Page mode (default): newest first (`event_date`, then id), page-numbered. Polling mode (extension): with `after_id`, the events whose id is greater, oldest first (ascending id), at most `per_page`, with `meta.next_after_id` and `has_more`; a client that keeps the last id it saw never misses or repeats an event, even while a daily run writes (`page` is then ignored).',
          querystring: Type.Object({
            ...FilterQuery,
            ...PageQuery,
            after_id: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: Number.MAX_SAFE_INTEGER,
                description: 'Polling mode: events with a greater id, oldest first.',
              }),
            ),
          }),
          response: {
            200: StatusEnvelope(Type.Array(FeedEventSchema), Type.Union([EventPageMetaSchema, CursorMetaSchema])),
            ...errorResponses({ auth: 'any', validation: true }),
            503: Type.Ref('Message'),
          },
        },
      },
      async (req) => {
        const q = req.query;
        const r = await events.feed(req.auth!.accountId, q);
        return { status: 'success' as const, data: r.data, meta: r.meta };
      },
    );
  };
}
