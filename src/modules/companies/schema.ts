import { Type, type TSchema } from '@sinclair/typebox';
import { DateSchema, TimestampSchema } from '../../http/schemas.ts';
import { CompanySnapshotSchema, ContactSchema, IdentifierSchema, StringEnum } from '../../registry/model.ts';
import { MAX_SEARCH_PAGE } from './filters.ts';

/** TypeBox schemas of the companies routes: they validate requests and shape every response. */

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);

/** DECISIONS 9: the day an answer shows. */
const DataAsOfSchema = (what: string) =>
  Type.Union([DateSchema, Type.Null()], {
    description:
      `The date (YYYY-MM-DD) of the latest completed daily run ${what} reflects; null before the first run completed. ` +
      'See docs/search.md, "Freshness".',
    examples: ['2026-11-24'],
  });

export const SnapshotBodySchema = Type.Object(
  {
    identifier_type: StringEnum(['NIP', 'REGON9', 'KRS'] as const, { description: 'NIP, REGON9 or KRS.' }),
    identifier_value: Type.String({
      maxLength: 50,
      description: 'NIP with or without spaces, dashes or a `PL` prefix; REGON9 with or without spaces; KRS with or without leading zeros.',
      examples: ['PL 774-000-14-54'],
    }),
  },
  { examples: [{ identifier_type: 'NIP', identifier_value: 'PL 774-000-14-54' }] },
);

export const SnapshotResponseSchema = Type.Object({
  status: Type.Literal('success'),
  data: CompanySnapshotSchema,
  meta: Type.Object({
    fetched_at: TimestampSchema,
    data_as_of: DataAsOfSchema('this snapshot'),
    first_seen_date: Type.String({ description: 'Extension: the day the service first stored the company (YYYY-MM-DD).' }),
    last_changed_date: Nullable(
      Type.String({ description: 'Extension: the day of the last detected change (YYYY-MM-DD); null when none was.' }),
    ),
  }),
});

const text = (maxLength: number, description: string, examples?: string[]) =>
  Type.Optional(Type.String({ maxLength, description, ...(examples ? { examples } : {}) }));
const date = (description: string) => Type.Optional(Type.String({ maxLength: 10, description, examples: ['2020-01-01'] }));

export const SearchQuerySchema = Type.Object({
  has_contact: text(10, 'Only companies with a contact of this type: `phone`, `email` or `fax`.'),
  activity_code: text(
    200,
    "An activity (PKD) code, with or without dots (`62.01.Z` = `6201Z`); any of the company's activities matches. A comma list means any of them.",
    ['62.01.Z'],
  ),
  activities: text(200, 'Alias of `activity_code`: a comma list of codes, any of which matches.', ['6201Z,6202Z']),
  activity_prefix: text(10, "The start of an activity code (`62`, `62.0`, `6201`); any of the company's activities matches.", ['62']),
  activity_start_from: date('Activity start date, lower bound (inclusive), YYYY-MM-DD.'),
  open_from: date('Alias of `activity_start_from`.'),
  activity_start_to: date('Activity start date, upper bound (inclusive), YYYY-MM-DD.'),
  voivodeship: text(
    60,
    'Voivodeship name, ignoring case and Polish diacritics (`Łódzkie` = `lodzkie`); a TERYT code or `województwo …` works too.',
    ['mazowieckie'],
  ),
  city: text(150, 'City name, ignoring case and Polish diacritics (`Łódź` = `LODZ`).', ['Warszawa']),
  postal_code: text(
    20,
    'Postal code, any text up to 20 characters; spaces, dashes and case do not matter (`00-950` = `00950`). A code no company has matches nothing.',
    ['00-950'],
  ),
  status: text(20, '`ACTIVE` (default), `SUSPENDED` or `DELETED`.'),
  legal_form: text(60, 'Legal form slug (GET /api/v1/dictionaries/legal-forms), e.g. `sp-z-oo`.', ['sp-z-oo']),
  q: text(
    200,
    'Extension: words the name must contain, each as the start of a word, ignoring case, diacritics and legal-form words (`sp. z o.o.`, `spółka akcyjna`, `S.A.`).',
    ['orlen'],
  ),
  page: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 1,
    description: `Page number; pages hold 20 results. A page past the last one is empty; one beyond ${MAX_SEARCH_PAGE} that would hold results (past the first 10,000) is refused: narrow the filters to see further.`,
  }),
});

export const SearchResultSchema = Type.Object({
  identifiers: Type.Array(IdentifierSchema),
  name: Type.String(),
  city: Nullable(Type.String()),
  voivodeship: Nullable(Type.String()),
  activity_start: Nullable(DateSchema),
  activity_main: Nullable(Type.String({ description: 'Main activity (PKD) code without dots.' })),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED'), Type.Literal('DELETED')]),
  contacts: Type.Array(ContactSchema),
});

export const SearchResponseSchema = Type.Object({
  status: Type.Literal('success'),
  data: Type.Object({
    total: Type.Integer({ description: 'Exact number of companies matching the filters.' }),
    per_page: Type.Integer(),
    current_page: Type.Integer(),
    last_page: Type.Integer(),
    data_as_of: DataAsOfSchema('this answer (every result and the total)'),
    results: Type.Array(SearchResultSchema),
  }),
});
