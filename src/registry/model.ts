import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { CONTACT_TYPES, DATE_TYPES, IDENTIFIER_TYPES, SOURCE_NAMES } from './model-lists.ts';

/**
 * The company model: the specification's snapshot shape plus the additions in docs/api-contract.md
 * (`source`, `vat_status`, `bank_accounts` per profile). Every source (KRS, BIR, CEIDG, VAT,
 * synthetic, file) produces `CompanySnapshot`s in this shape. One TypeBox schema per part: the
 * types below derive from it, and the API's snapshot and search schemas use it as is.
 */

/** A string enum: one `enum` in JSON Schema (serialised as a plain string, one error when it fails). */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string; default?: T } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);

// The lists live in model-lists.ts (loaded without TypeBox); this module stays the one to import from.
export { CONTACT_TYPES, DATE_TYPES, IDENTIFIER_TYPES, SOURCE_NAMES };

export type IdentifierType = (typeof IDENTIFIER_TYPES)[number];
export type SourceName = (typeof SOURCE_NAMES)[number];
export type DateType = (typeof DATE_TYPES)[number];
export type ContactType = (typeof CONTACT_TYPES)[number];

export const IdentifierSchema = Type.Object({
  type: Type.Union(IDENTIFIER_TYPES.map((t) => Type.Literal(t))),
  value: Type.String(),
});
export type Identifier = Static<typeof IdentifierSchema>;

export const AddressSchema = Type.Object({
  street: Type.String(),
  building: Type.String(),
  apartment: Type.String(),
  city: Type.String(),
  postal_code: Type.String(),
  voivodeship: Type.String(),
  country_code: Type.String(),
});
export type Address = Static<typeof AddressSchema>;

export const DatedEntrySchema = Type.Object({
  type: StringEnum(DATE_TYPES, { description: DATE_TYPES.join(', ') + '.' }),
  date: Type.String({ description: 'YYYY-MM-DD' }),
});
export type DatedEntry = Static<typeof DatedEntrySchema>;

export const LocalUnitSchema = Type.Object({
  identifier: Type.String({ description: 'REGON14 of the local unit (or another stable identifier the source gives).' }),
  name: Type.String(),
  address: Nullable(AddressSchema),
  dates: Type.Array(DatedEntrySchema, { description: 'A unit closes by disappearing from `units[]` or by gaining a `closure` date.' }),
});
export type LocalUnit = Static<typeof LocalUnitSchema>;

export const ContactSchema = Type.Object({
  type: StringEnum(CONTACT_TYPES, { description: '`phone`, `email` or `fax`.' }),
  value: Type.String(),
});
export type Contact = Static<typeof ContactSchema>;

export const ActivitySchema = Type.Object({
  code: Type.String({ description: 'PKD code without dots, e.g. `6201Z`.' }),
  name: Type.String(),
  is_primary: Type.Boolean(),
});
export type Activity = Static<typeof ActivitySchema>;

export const PersonSchema = Type.Object({ full_name: Type.String(), role: Type.String() });
export type Person = Static<typeof PersonSchema>;

export const ProfileSchema = Type.Object({
  source: StringEnum(SOURCE_NAMES, {
    description: 'The registry this profile comes from: `krs`, `bir`, `ceidg`, `vat`, `synthetic` or `file`.',
  }),
  name: Type.String(),
  status: Type.String({ description: 'Registry-language label, e.g. `aktywny`, `zawieszony`, `wykreślony`.' }),
  legal_form: Type.String({ description: 'Registry-language label.' }),
  address: Nullable(AddressSchema),
  units: Type.Array(LocalUnitSchema),
  contacts: Type.Array(ContactSchema),
  activities: Type.Array(ActivitySchema),
  dates: Type.Array(DatedEntrySchema),
  websites: Type.Array(Type.String(), { description: 'URL strings.' }),
  vat_status: Nullable(Type.String({ description: 'VAT white-list status label; null when the source does not say.' })),
  bank_accounts: Type.Array(Type.String()),
});
export type Profile = Static<typeof ProfileSchema>;

export const CompanyIdentitySchema = Type.Object({
  identifiers: Type.Array(IdentifierSchema),
  company_type: Type.String(),
  country_code: Type.String(),
});
export type CompanyIdentity = Static<typeof CompanyIdentitySchema>;

/** `data` of POST /companies/snapshot without `meta`; also one line of the NDJSON file source. */
export const CompanySnapshotSchema = Type.Object({
  identity: CompanyIdentitySchema,
  profiles: Type.Array(ProfileSchema),
  persons: Type.Array(PersonSchema),
});
export type CompanySnapshot = Static<typeof CompanySnapshotSchema>;

export type CompanyStatus = 'ACTIVE' | 'SUSPENDED' | 'DELETED';

export type Severity = 'info' | 'warning' | 'critical';

export const EVENT_TYPES = [
  // identity and legal form
  'COMPANY_NAME_CHANGED',
  'COMPANY_LEGAL_FORM_CHANGED',
  'COMPANY_TAX_IDENTITY_CHANGED',
  // address
  'COMPANY_REGISTERED_ADDRESS_ADDED',
  'COMPANY_REGISTERED_ADDRESS_CHANGED',
  // activities
  'COMPANY_ACTIVITIES_ADDED',
  'COMPANY_ACTIVITIES_REMOVED',
  'COMPANY_ACTIVITIES_CHANGED',
  'COMPANY_MAIN_ACTIVITY_CHANGED',
  // status
  'COMPANY_SUSPENDED_DATE',
  'COMPANY_RESUMPTION_DATE',
  'COMPANY_CLOSED_DATE',
  'COMPANY_START_DATE_CHANGE',
  'COMPANY_STATUS_CHANGED',
  // insolvency
  'COMPANY_BANKRUPTCY_STARTED',
  'COMPANY_BANKRUPTCY_ENDED',
  'COMPANY_LIQUIDATION_STARTED',
  'COMPANY_LIQUIDATION_ENDED',
  'COMPANY_RESTRUCTURING_STARTED',
  'COMPANY_RESTRUCTURING_ENDED',
  // contact and local units
  'COMPANY_EMAIL_CHANGED',
  'COMPANY_PHONE_CHANGED',
  'COMPANY_WEBSITE_CHANGED',
  'COMPANY_UNIT_OPENED',
  'COMPANY_UNIT_CLOSED',
  // persons
  'COMPANY_PERSON_ADDED',
  'COMPANY_PERSON_REMOVED',
  // tax
  'COMPANY_VAT_STATUS_CHANGED',
  'COMPANY_BANK_ACCOUNTS_CHANGED',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export type EventScope = 'identity' | 'address' | 'activities' | 'status' | 'insolvency' | 'contact' | 'persons' | 'tax';

/**
 * The feeds' `scope` groups. The specification's six groups are kept whole (its "Identity and
 * legal form" holds the tax identity), the nine added types are placed beside them, and `tax`
 * gathers the tax-related types: the NIP's change is in both `identity` and `tax`.
 */
export const EVENT_SCOPES: Record<EventScope, readonly EventType[]> = {
  identity: ['COMPANY_NAME_CHANGED', 'COMPANY_LEGAL_FORM_CHANGED', 'COMPANY_TAX_IDENTITY_CHANGED'],
  address: ['COMPANY_REGISTERED_ADDRESS_ADDED', 'COMPANY_REGISTERED_ADDRESS_CHANGED'],
  activities: ['COMPANY_ACTIVITIES_ADDED', 'COMPANY_ACTIVITIES_REMOVED', 'COMPANY_ACTIVITIES_CHANGED', 'COMPANY_MAIN_ACTIVITY_CHANGED'],
  status: [
    'COMPANY_SUSPENDED_DATE',
    'COMPANY_RESUMPTION_DATE',
    'COMPANY_CLOSED_DATE',
    'COMPANY_START_DATE_CHANGE',
    'COMPANY_STATUS_CHANGED',
  ],
  insolvency: [
    'COMPANY_BANKRUPTCY_STARTED',
    'COMPANY_BANKRUPTCY_ENDED',
    'COMPANY_LIQUIDATION_STARTED',
    'COMPANY_LIQUIDATION_ENDED',
    'COMPANY_RESTRUCTURING_STARTED',
    'COMPANY_RESTRUCTURING_ENDED',
  ],
  contact: ['COMPANY_EMAIL_CHANGED', 'COMPANY_PHONE_CHANGED', 'COMPANY_WEBSITE_CHANGED', 'COMPANY_UNIT_OPENED', 'COMPANY_UNIT_CLOSED'],
  persons: ['COMPANY_PERSON_ADDED', 'COMPANY_PERSON_REMOVED'],
  tax: ['COMPANY_TAX_IDENTITY_CHANGED', 'COMPANY_VAT_STATUS_CHANGED', 'COMPANY_BANK_ACCOUNTS_CHANGED'],
};

/** One detected change, before it is stored (the store adds id, company and event_date). */
export interface DetectedEvent {
  event_type: EventType;
  old_value: string | null;
  new_value: string | null;
  severity: Severity;
}
