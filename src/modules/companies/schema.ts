import { Type, type TSchema } from '@sinclair/typebox';
import { DateSchema, TimestampSchema } from '../../http/schemas.ts';
import { MAX_SEARCH_PAGE } from './filters.ts';

/** TypeBox schemas of the companies routes: they validate requests and shape every response. */

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);

export const IdentifierSchema = Type.Object({
  type: Type.Union([Type.Literal('NIP'), Type.Literal('REGON9'), Type.Literal('KRS')]),
  value: Type.String(),
});

export const AddressSchema = Type.Object({
  street: Type.String(), building: Type.String(), apartment: Type.String(), city: Type.String(),
  postal_code: Type.String(), voivodeship: Type.String(), country_code: Type.String(),
});

const DatedSchema = Type.Object({
  type: Type.String({ description: 'registration, activity_start, suspension, resumption, closure, deletion, bankruptcy_start, bankruptcy_end, liquidation_start, liquidation_end, restructuring_start or restructuring_end.' }),
  date: Type.String({ description: 'YYYY-MM-DD' }),
});

export const ContactSchema = Type.Object({
  type: Type.String({ description: '`phone`, `email` or `fax`.' }),
  value: Type.String(),
});

const ProfileSchema = Type.Object({
  source: Type.String({ description: 'The registry this profile comes from: `krs`, `bir`, `ceidg`, `vat`, `synthetic` or `file`.' }),
  name: Type.String(),
  status: Type.String({ description: 'Registry-language label, e.g. `aktywny`.' }),
  legal_form: Type.String({ description: 'Registry-language label.' }),
  address: Nullable(AddressSchema),
  units: Type.Array(Type.Object({
    identifier: Type.String(), name: Type.String(), address: Nullable(AddressSchema), dates: Type.Array(DatedSchema),
  })),
  contacts: Type.Array(ContactSchema),
  activities: Type.Array(Type.Object({ code: Type.String(), name: Type.String(), is_primary: Type.Boolean() })),
  dates: Type.Array(DatedSchema),
  websites: Type.Array(Type.String()),
  vat_status: Nullable(Type.String({ description: 'VAT white-list status label; null when the source does not say.' })),
  bank_accounts: Type.Array(Type.String()),
});

export const SnapshotSchema = Type.Object({
  identity: Type.Object({
    identifiers: Type.Array(IdentifierSchema),
    company_type: Type.String(),
    country_code: Type.String(),
  }),
  profiles: Type.Array(ProfileSchema),
  persons: Type.Array(Type.Object({ full_name: Type.String(), role: Type.String() })),
});

/** A string enum (one `enum` error when it fails, where a union of literals reports one per member). */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string; default?: T } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

export const SnapshotBodySchema = Type.Object({
  identifier_type: StringEnum(['NIP', 'REGON9', 'KRS'] as const, { description: 'NIP, REGON9 or KRS.' }),
  identifier_value: Type.String({
    maxLength: 50,
    description: 'NIP with or without spaces, dashes or a `PL` prefix; REGON9 with or without spaces; KRS with or without leading zeros.',
    examples: ['PL 774-000-14-54'],
  }),
});

export const SnapshotResponseSchema = Type.Object({
  status: Type.Literal('success'),
  data: SnapshotSchema,
  meta: Type.Object({
    fetched_at: TimestampSchema,
    first_seen_date: Type.String({ description: 'Extension: the day the service first stored the company (YYYY-MM-DD).' }),
    last_changed_date: Nullable(Type.String({ description: 'Extension: the day of the last detected change (YYYY-MM-DD); null when none was.' })),
  }),
});

const text = (maxLength: number, description: string, examples?: string[]) => Type.Optional(Type.String({ maxLength, description, ...(examples ? { examples } : {}) }));
const date = (description: string) => Type.Optional(Type.String({ maxLength: 10, description, examples: ['2020-01-01'] }));

export const SearchQuerySchema = Type.Object({
  has_contact: text(10, 'Only companies with a contact of this type: `phone`, `email` or `fax`.'),
  activity_code: text(200, 'An activity (PKD) code, with or without dots (`62.01.Z` = `6201Z`); any of the company\'s activities matches. A comma list means any of them.', ['62.01.Z']),
  activities: text(200, 'Alias of `activity_code`: a comma list of codes, any of which matches.', ['6201Z,6202Z']),
  activity_prefix: text(10, 'The start of an activity code (`62`, `62.0`, `6201`); any of the company\'s activities matches.', ['62']),
  activity_start_from: date('Activity start date, lower bound (inclusive), YYYY-MM-DD.'),
  open_from: date('Alias of `activity_start_from`.'),
  activity_start_to: date('Activity start date, upper bound (inclusive), YYYY-MM-DD.'),
  voivodeship: text(60, 'Voivodeship name, ignoring case and Polish diacritics (`Łódzkie` = `lodzkie`); a TERYT code or `województwo …` works too.', ['mazowieckie']),
  city: text(150, 'City name, ignoring case and Polish diacritics (`Łódź` = `LODZ`).', ['Warszawa']),
  postal_code: text(20, 'Postal code, with or without the dash (`00-950` = `00950`).', ['00-950']),
  status: text(20, '`ACTIVE` (default), `SUSPENDED` or `DELETED`.'),
  legal_form: text(60, 'Legal form slug (GET /api/v1/dictionaries/legal-forms), e.g. `sp-z-oo`.', ['sp-z-oo']),
  q: text(200, 'Extension: words the name must contain, each as the start of a word, ignoring case, diacritics and legal-form words (`sp. z o.o.`, `spółka akcyjna`, `S.A.`).', ['orlen']),
  page: Type.Integer({ minimum: 1, maximum: MAX_SEARCH_PAGE, default: 1, description: `Page number; pages hold 20 results. At most ${MAX_SEARCH_PAGE} (the first 10,000 results): narrow the filters to see further.` }),
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
    results: Type.Array(SearchResultSchema),
  }),
});
