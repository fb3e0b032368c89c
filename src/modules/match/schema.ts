import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { IdentifierSchema, StringEnum } from '../../registry/model.ts';
import { FEATURES } from './scoring.ts';

/** TypeBox schemas of POST /companies/match (DECISIONS.md section 10): they validate and shape it. */

export const MAX_MATCH_QUERIES = 100;

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const text = (maxLength: number, description: string, examples: string[]) =>
  Type.Optional(Type.String({ maxLength, description, examples }));

export const MatchQuerySchema = Type.Object(
  {
    name: text(
      300,
      'The company name as written: case, Polish diacritics, punctuation, quotes, word order and legal-form words (`sp. z o.o.`, `S.A.`, `s.c.`) do not matter; a typo or two in a longer name is forgiven.',
      ['Orlen S.A.'],
    ),
    nip: text(
      30,
      'NIP, with or without spaces, dashes, a `PL` prefix or its label (`NIP: 774-000-14-54`). A NIP that names a company wins outright.',
      ['PL 774-000-14-54'],
    ),
    regon: text(
      30,
      'REGON (9 digits, or 14: a local unit’s names its company), with or without spaces, dashes or its label (`REGON: 610188201`).',
      ['610188201'],
    ),
    krs: text(30, 'KRS number, with or without leading zeros or its label (`KRS nr 0000028860`).', ['28860']),
    city: text(100, 'City, ignoring case and diacritics (`Łódź` = `Lodz`).', ['Płock']),
    postal_code: text(20, 'Postal code, with or without the dash.', ['09-411']),
    street: text(200, 'Street, with or without `ul.`/`al.` and the building number.', ['ul. Chemików 7']),
  },
  {
    description:
      'One company to find: a name or an identifier (nip, regon, krs) is required; the address parts raise the score when they agree.',
  },
);
export type MatchQueryBody = Static<typeof MatchQuerySchema>;

export const MatchBodySchema = Type.Object(
  {
    queries: Type.Array(MatchQuerySchema, {
      minItems: 1,
      maxItems: MAX_MATCH_QUERIES,
      description: `1 to ${MAX_MATCH_QUERIES} queries; each costs a credit.`,
    }),
  },
  {
    examples: [
      {
        queries: [
          { name: 'orlen sa', city: 'Plock' },
          { name: 'Kowalski Budownictwo sp. z o.o.', postal_code: '00-950', street: 'ul. Prosta 12' },
          { nip: 'PL 774-000-14-54' },
        ],
      },
    ],
  },
);
export type MatchBody = Static<typeof MatchBodySchema>;

export const MatchCandidateSchema = Type.Object({
  identifiers: Type.Array(IdentifierSchema),
  name: Type.String(),
  city: Nullable(Type.String()),
  postal_code: Nullable(Type.String()),
  status: StringEnum(['ACTIVE', 'SUSPENDED', 'DELETED'] as const),
  score: Type.Number({ minimum: 0, maximum: 1, description: 'How well the company fits the query, from 0 to 1 (docs/match.md).' }),
  match: Type.Boolean({ description: 'True for the one candidate the service bets on; at most one a query.' }),
  features: Type.Array(StringEnum(FEATURES), { description: 'What agreed: `identifier`, `name`, `city`, `postal_code`, `street`.' }),
});

export const MatchResultSchema = Type.Object({
  query_index: Type.Integer({ minimum: 0, description: 'Index of the query in `queries`.' }),
  candidates: Type.Array(MatchCandidateSchema, {
    maxItems: 5,
    description: 'Up to five, best first; empty when nothing resembles the query.',
  }),
});
export type MatchResult = Static<typeof MatchResultSchema>;

export const MatchResponseSchema = Type.Object(
  {
    status: Type.Literal('success'),
    data: Type.Array(MatchResultSchema),
  },
  {
    examples: [
      {
        status: 'success',
        data: [
          {
            query_index: 0,
            candidates: [
              {
                identifiers: [
                  { type: 'NIP', value: '7740001454' },
                  { type: 'REGON9', value: '610188201' },
                  { type: 'KRS', value: '0000028860' },
                ],
                name: 'ORLEN SPÓŁKA AKCYJNA',
                city: 'Płock',
                postal_code: '09-411',
                status: 'ACTIVE',
                score: 1,
                match: true,
                features: ['name', 'city'],
              },
            ],
          },
        ],
      },
    ],
  },
);
