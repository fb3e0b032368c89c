/**
 * The company model: the specification's snapshot shape plus the additions in docs/api-contract.md.
 * Every source (KRS, BIR, CEIDG, VAT, synthetic, file) produces `CompanySnapshot`s in this shape.
 */

export type IdentifierType = 'NIP' | 'REGON9' | 'KRS';
export const IDENTIFIER_TYPES: readonly IdentifierType[] = ['NIP', 'REGON9', 'KRS'];

export type SourceName = 'krs' | 'bir' | 'ceidg' | 'vat' | 'synthetic' | 'file';

export interface Identifier {
  type: IdentifierType;
  value: string;
}

export interface Address {
  street: string;
  building: string;
  apartment: string;
  city: string;
  postal_code: string;
  voivodeship: string;
  country_code: string;
}

export type DateType =
  | 'registration'
  | 'activity_start'
  | 'suspension'
  | 'resumption'
  | 'closure'
  | 'deletion'
  | 'bankruptcy_start'
  | 'bankruptcy_end'
  | 'liquidation_start'
  | 'liquidation_end'
  | 'restructuring_start'
  | 'restructuring_end';

export const DATE_TYPES: readonly DateType[] = [
  'registration', 'activity_start', 'suspension', 'resumption', 'closure', 'deletion',
  'bankruptcy_start', 'bankruptcy_end', 'liquidation_start', 'liquidation_end',
  'restructuring_start', 'restructuring_end',
];

export interface DatedEntry {
  type: DateType;
  /** YYYY-MM-DD */
  date: string;
}

export interface LocalUnit {
  /** REGON14 of the local unit (or another stable identifier the source gives). */
  identifier: string;
  name: string;
  address: Address | null;
  /** A unit closes by disappearing from `units[]` or by gaining a `closure` date. */
  dates: DatedEntry[];
}

export type ContactType = 'phone' | 'email' | 'fax';
export interface Contact {
  type: ContactType;
  value: string;
}

export interface Activity {
  /** PKD code without dots, e.g. `6201Z`. */
  code: string;
  name: string;
  is_primary: boolean;
}

export interface Person {
  full_name: string;
  role: string;
}

export interface Profile {
  source: SourceName;
  name: string;
  /** Registry-language label, e.g. `aktywny`, `zawieszony`, `wykreślony`. */
  status: string;
  legal_form: string;
  address: Address | null;
  units: LocalUnit[];
  contacts: Contact[];
  activities: Activity[];
  dates: DatedEntry[];
  /** URL strings. */
  websites: string[];
  vat_status: string | null;
  bank_accounts: string[];
}

export interface CompanyIdentity {
  identifiers: Identifier[];
  company_type: string;
  country_code: string;
}

/** `data` of POST /companies/snapshot without `meta`; also one line of the NDJSON file source. */
export interface CompanySnapshot {
  identity: CompanyIdentity;
  profiles: Profile[];
  persons: Person[];
}

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

export const EVENT_SCOPES: Record<EventScope, readonly EventType[]> = {
  identity: ['COMPANY_NAME_CHANGED', 'COMPANY_LEGAL_FORM_CHANGED'],
  address: ['COMPANY_REGISTERED_ADDRESS_ADDED', 'COMPANY_REGISTERED_ADDRESS_CHANGED'],
  activities: ['COMPANY_ACTIVITIES_ADDED', 'COMPANY_ACTIVITIES_REMOVED', 'COMPANY_ACTIVITIES_CHANGED', 'COMPANY_MAIN_ACTIVITY_CHANGED'],
  status: ['COMPANY_SUSPENDED_DATE', 'COMPANY_RESUMPTION_DATE', 'COMPANY_CLOSED_DATE', 'COMPANY_START_DATE_CHANGE', 'COMPANY_STATUS_CHANGED'],
  insolvency: ['COMPANY_BANKRUPTCY_STARTED', 'COMPANY_BANKRUPTCY_ENDED', 'COMPANY_LIQUIDATION_STARTED', 'COMPANY_LIQUIDATION_ENDED', 'COMPANY_RESTRUCTURING_STARTED', 'COMPANY_RESTRUCTURING_ENDED'],
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
