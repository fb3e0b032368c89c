import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/schemas.ts';
import { StringEnum } from '../../registry/model.ts';
import { listActivities, listLegalForms, listVoivodeships } from './service.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

/** Dictionaries for building a search form (extension): free, any token. */
export function dictionaryRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/dictionaries/legal-forms',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Dictionaries'],
          summary: 'Legal forms: the slugs the search filter `legal_form` takes',
          security: [{ bearer: [] }],
          description:
            'Free. `label` is the registry-language name; `register` says where such entities are registered (`krs`, `ceidg`, `regon`, `other`).',
          response: {
            200: Type.Object({
              status: Type.Literal('success'),
              data: Type.Array(
                Type.Object({ slug: Type.String(), label: Type.String(), abbreviation: Nullable(Type.String()), register: Type.String() }),
              ),
            }),
            ...errorResponses({ auth: 'any' }),
          },
        },
      },
      async () => ({ status: 'success' as const, data: listLegalForms() }),
    );

    app.get(
      '/dictionaries/voivodeships',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Dictionaries'],
          summary: 'Voivodeships: the values the search filter `voivodeship` takes',
          security: [{ bearer: [] }],
          description: 'Free. The filter accepts the name (any case, with or without diacritics), the slug or the TERYT code.',
          response: {
            200: Type.Object({
              status: Type.Literal('success'),
              data: Type.Array(Type.Object({ code: Type.String({ description: 'TERYT code' }), name: Type.String(), slug: Type.String() })),
            }),
            ...errorResponses({ auth: 'any' }),
          },
        },
      },
      async () => ({ status: 'success' as const, data: listVoivodeships() }),
    );

    app.get(
      '/dictionaries/activities',
      {
        config: { auth: 'any' },
        schema: {
          tags: ['Dictionaries'],
          summary: 'PKD activity codes and names',
          security: [{ bearer: [] }],
          description:
            'Free. PKD 2025 subclasses by default (the codes companies register); `version=2007` for the previous classification, which registries still carry; ' +
            '`level=all` adds sections, divisions, groups and classes. `prefix` keeps codes starting with it (dots ignored); ' +
            '`q` keeps entries whose name has words starting with each word of q (case and diacritics ignored) or whose code starts with q. Code order.',
          querystring: Type.Object({
            version: Type.Optional(StringEnum(['2025', '2007'] as const, { default: '2025', description: 'PKD version.' })),
            level: Type.Optional(
              StringEnum(['subclass', 'all'] as const, { default: 'subclass', description: '`subclass` or `all` levels.' }),
            ),
            prefix: Type.Optional(Type.String({ maxLength: 10, examples: ['62'] })),
            q: Type.Optional(Type.String({ maxLength: 100, examples: ['oprogramowanie'] })),
            page: Type.Integer({ minimum: 1, maximum: 1_000, default: 1 }),
            per_page: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          }),
          response: {
            200: Type.Object({
              status: Type.Literal('success'),
              data: Type.Array(
                Type.Object({
                  code: Type.String({ description: 'Without dots, as the search filters take it.' }),
                  dotted: Type.String({ description: 'As PKD writes it, e.g. `62.01.Z`.' }),
                  name: Type.String(),
                  level: Type.String({ description: '`section`, `division`, `group`, `class` or `subclass`.' }),
                }),
              ),
              meta: Type.Object({
                total: Type.Integer(),
                per_page: Type.Integer(),
                current_page: Type.Integer(),
                last_page: Type.Integer(),
              }),
            }),
            ...errorResponses({ auth: 'any', validation: true }),
          },
        },
      },
      async (req) => {
        const q = req.query;
        const text = (s: string | undefined) => (s === undefined || s.trim() === '' ? null : s.trim());
        return {
          status: 'success' as const,
          ...listActivities({
            version: q.version === '2007' ? 2007 : 2025,
            level: q.level === 'all' ? 'all' : 'subclass',
            prefix: text(q.prefix),
            q: text(q.q),
            page: q.page,
            perPage: q.per_page,
          }),
        };
      },
    );
  };
}
