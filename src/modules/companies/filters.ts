import { ValidationError } from '../../lib/errors.ts';
import { findVoivodeship, legalFormBySlug } from '../../registry/dictionaries.ts';
import type { CompanyStatus, ContactType } from '../../registry/model.ts';
import { foldText, normalizeActivityCode, stripLegalFormWords } from '../../lib/text.ts';
import { isIsoDate } from '../../lib/dates.ts';
import { stripFormatting } from '../../lib/identifiers.ts';

/**
 * The search query as the client sends it (every value bounded by the route's schema) and the
 * normalised filter set the repository runs. Normalising is pure, so equal filter sets written
 * differently (`62.01.Z` / `6201Z`, `00-950` / `00950`, `Łódź` / `LODZ`) are one filter set (one `filtersKey`).
 */

export const SEARCH_PAGE_SIZE = 20;
/** Deepest result a page may start at: deeper offsets cost a walk over every skipped row. */
export const MAX_SEARCH_RESULTS = 10_000;
export const MAX_SEARCH_PAGE = MAX_SEARCH_RESULTS / SEARCH_PAGE_SIZE;
export const MAX_ACTIVITY_CODES = 20;
export const MAX_NAME_WORDS = 8;

export interface SearchQuery {
  has_contact?: string;
  activity_code?: string;
  activities?: string;
  activity_prefix?: string;
  activity_start_from?: string;
  open_from?: string;
  activity_start_to?: string;
  voivodeship?: string;
  city?: string;
  postal_code?: string;
  status?: string;
  legal_form?: string;
  q?: string;
  page?: number;
}

export interface SearchFilters {
  status: CompanyStatus;
  hasContact: ContactType | null;
  /** Any of these codes (normalised, sorted, distinct). */
  activityCodes: string[];
  activityPrefix: string | null;
  activityStartFrom: string | null;
  activityStartTo: string | null;
  /** Folded as the companies table stores it (`lodzkie`). */
  voivodeship: string | null;
  city: string | null;
  /** Spaces and dashes removed, upper case; only five digits can match (isStoredPostalCode). */
  postalCode: string | null;
  legalForm: string | null;
  /** Folded word prefixes of the name, legal-form words removed (sorted, distinct). */
  nameWords: string[];
}

export interface SearchRequest {
  filters: SearchFilters;
  page: number;
}

const STATUSES: readonly CompanyStatus[] = ['ACTIVE', 'SUSPENDED', 'DELETED'];
const CONTACT_TYPES: readonly ContactType[] = ['phone', 'email', 'fax'];
// A PKD subclass is 4 digits and a letter (`6201Z`); registries also carry group or class codes
// (`201`, `4730`). Prefixes may stop anywhere.
const ACTIVITY_CODE = /^\d{2,4}[A-Z]?$/;
const ACTIVITY_PREFIX = /^\d{1,4}[A-Z]?$/;
// The query is cut where the index cuts names (src/modules/companies/search-index-rows.ts): at
// anything but a-z and 0-9 among the Latin letters that folding leaves (so `cæsar` is `c sar` on
// both sides), and at anything but a letter or a digit beyond them. A word in another script
// (Cyrillic, Greek) thus stays a word, which no name's word is, rather than a separator: a q made of
// such words used to set no name condition and match every company.
const LATIN_NON_WORD = /[^a-z0-9\u0250-\u{10ffff}]+/gu;
const WORD_SPLIT = /[^\p{L}\p{N}]+/u;
const CONTROL = /[\u0000-\u001f\u007f]/;
const NUMERIC_KEYS: ReadonlySet<string> = new Set(['page', 'per_page']);
/** The filters a search reads (SearchQuery, with `per_page`): any other argument is ignored, whatever its type. */
const SEARCH_KEYS: ReadonlySet<string> = new Set([
  'has_contact',
  'activity_code',
  'activities',
  'activity_prefix',
  'activity_start_from',
  'open_from',
  'activity_start_to',
  'voivodeship',
  'city',
  'postal_code',
  'status',
  'legal_form',
  'q',
  'page',
  'per_page',
] satisfies (keyof SearchQuery | 'per_page')[]);

type Errors = Record<string, string[]>;

/**
 * Whether a postal-code filter can match a company: the registry stores postal codes as their
 * five digits (`00950`); the in-memory index holds only those, so every engine refuses the rest alike.
 */
export function isStoredPostalCode(code: string): boolean {
  return /^\d{5}$/.test(code);
}

function add(errors: Errors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

function present(value: string | undefined): string | null {
  if (value === undefined) return null;
  const t = value.trim();
  return t === '' ? null : t;
}

function parseCodes(field: string, raw: string | null, errors: Errors): string[] {
  if (raw === null) return [];
  const codes: string[] = [];
  for (const part of raw.split(',')) {
    const t = part.trim();
    if (t === '') continue;
    const code = normalizeActivityCode(t);
    if (!ACTIVITY_CODE.test(code)) {
      add(errors, field, `The ${field.replace(/_/g, ' ')} field must hold PKD codes such as 62.01.Z or 6201Z, separated by commas.`);
      return [];
    }
    codes.push(code);
  }
  return codes;
}

function parseDate(field: string, raw: string | null, errors: Errors): string | null {
  if (raw === null) return null;
  if (!isIsoDate(raw)) {
    add(errors, field, `The ${field.replace(/_/g, ' ')} field must be a valid date in the format YYYY-MM-DD.`);
    return null;
  }
  return raw;
}

/** Folded, legal-form words removed, split into words; an empty list when nothing is left. */
export function nameWordsOf(q: string): string[] {
  const words = stripLegalFormWords(foldText(q))
    .replace(LATIN_NON_WORD, ' ')
    .split(WORD_SPLIT)
    .filter((w) => w !== '');
  return [...new Set(words)].sort();
}

/**
 * Every error of a search query at once: the schema's (`schemaErrors`, keyed by parameter) and the
 * value checks of the parameters the schema let through (docs/search.md: "Every error is reported
 * at once"), so that `?page=0&status=FOO` names both.
 */
export function searchQueryErrors(query: Record<string, unknown>, schemaErrors: Record<string, string[]>): Record<string, string[]> {
  const rest = Object.fromEntries(Object.entries(query).filter(([k]) => !(k in schemaErrors) && typeof query[k] === 'string'));
  try {
    parseSearchQuery(rest as SearchQuery);
    return schemaErrors;
  } catch (e) {
    if (e instanceof ValidationError) return { ...schemaErrors, ...e.errors };
    throw e;
  }
}

/**
 * Validates and normalises a search query. Throws ValidationError (422) naming each bad field.
 * Aliases: `activities` joins `activity_code` (any of the codes), `open_from` is
 * `activity_start_from` (both given: the later date applies, as both bounds do).
 */
export function parseSearchQuery(query: SearchQuery): SearchRequest {
  const errors: Errors = {};
  // A NUL byte is not text to PostgreSQL (it would fail the query); no filter has a use for control characters.
  const clean: SearchQuery = {};
  for (const [key, value] of Object.entries(query) as [keyof SearchQuery, unknown][]) {
    if (typeof value === 'string' && CONTROL.test(value))
      add(errors, key, `The ${key.replace(/_/g, ' ')} field must not contain control characters.`);
    // Every filter is text (a query string's; the MCP tool passes arguments the schema may not
    // name, as the aliases): a number or a list is refused, not read as text. An argument that is
    // no filter is ignored, as the route ignores an unknown parameter (an agent's `limit: 10`).
    else if (value !== undefined && typeof value !== 'string' && !NUMERIC_KEYS.has(key)) {
      if (SEARCH_KEYS.has(key)) add(errors, key, `The ${key.replace(/_/g, ' ')} field must be a string.`);
    } else (clean as Record<string, unknown>)[key] = value;
  }
  query = clean;

  const statusRaw = present(query.status)?.toUpperCase() ?? 'ACTIVE';
  if (!(STATUSES as readonly string[]).includes(statusRaw))
    add(errors, 'status', 'The selected status is invalid. Use ACTIVE, SUSPENDED or DELETED.');

  const contactRaw = present(query.has_contact)?.toLowerCase() ?? null;
  if (contactRaw !== null && !(CONTACT_TYPES as readonly string[]).includes(contactRaw)) {
    add(errors, 'has_contact', 'The selected has contact is invalid. Use phone, email or fax.');
  }

  const codes = [
    ...parseCodes('activity_code', present(query.activity_code), errors),
    ...parseCodes('activities', present(query.activities), errors),
  ];
  const activityCodes = [...new Set(codes)].sort();
  // Keyed by the parameter the caller used (`activities` when both carry codes).
  if (activityCodes.length > MAX_ACTIVITY_CODES)
    add(
      errors,
      present(query.activities) === null ? 'activity_code' : 'activities',
      `At most ${MAX_ACTIVITY_CODES} activity codes may be given.`,
    );

  let activityPrefix: string | null = null;
  const prefixRaw = present(query.activity_prefix);
  if (prefixRaw !== null) {
    activityPrefix = normalizeActivityCode(prefixRaw);
    if (!ACTIVITY_PREFIX.test(activityPrefix))
      add(errors, 'activity_prefix', 'The activity prefix field must be the start of a PKD code, such as 62 or 62.01.');
  }

  const fromA = parseDate('activity_start_from', present(query.activity_start_from), errors);
  const fromB = parseDate('open_from', present(query.open_from), errors);
  const activityStartFrom = fromA !== null && fromB !== null ? (fromA > fromB ? fromA : fromB) : (fromA ?? fromB);
  const activityStartTo = parseDate('activity_start_to', present(query.activity_start_to), errors);
  if (activityStartFrom !== null && activityStartTo !== null && activityStartTo < activityStartFrom) {
    add(errors, 'activity_start_to', 'The activity start to field must be a date after or equal to activity start from.');
  }

  let voivodeship: string | null = null;
  const voivodeshipRaw = present(query.voivodeship);
  if (voivodeshipRaw !== null) {
    const found = findVoivodeship(voivodeshipRaw);
    if (found) voivodeship = foldText(found.name);
    else add(errors, 'voivodeship', 'The selected voivodeship is invalid. See GET /api/v1/dictionaries/voivodeships.');
  }

  const cityRaw = present(query.city);
  const city = cityRaw === null ? null : foldText(cityRaw);

  // Any text up to the schema's 20 characters (the specification's only limit; foreign codes
  // are coming): spaces and dashes do not count, case does not matter, and a value no company
  // has (anything but five digits today, see isStoredPostalCode) simply matches nothing.
  const postalRaw = present(query.postal_code);
  // Spaces and any dash-like character (`-`, `‐`, `–`, `—`), as in identifiers.
  const postalCode = postalRaw === null ? null : stripFormatting(postalRaw).toUpperCase();

  let legalForm: string | null = null;
  const legalRaw = present(query.legal_form);
  if (legalRaw !== null) {
    const form = legalFormBySlug(legalRaw.toLowerCase());
    if (form) legalForm = form.slug;
    else add(errors, 'legal_form', 'The selected legal form is invalid. See GET /api/v1/dictionaries/legal-forms.');
  }

  const qRaw = present(query.q);
  const nameWords = qRaw === null ? [] : nameWordsOf(qRaw);
  if (nameWords.length > MAX_NAME_WORDS) add(errors, 'q', `The q field may hold at most ${MAX_NAME_WORDS} words.`);

  const page = query.page ?? 1;

  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return {
    page,
    filters: {
      status: statusRaw as CompanyStatus,
      hasContact: contactRaw as ContactType | null,
      activityCodes,
      activityPrefix,
      activityStartFrom,
      activityStartTo,
      voivodeship,
      city,
      postalCode,
      legalForm,
      nameWords,
    },
  };
}

/** One string per distinct filter set, equal for equivalent spellings (a key for logs or a cache). */
export function filtersKey(f: SearchFilters): string {
  return JSON.stringify([
    f.status,
    f.hasContact,
    f.activityCodes,
    f.activityPrefix,
    f.activityStartFrom,
    f.activityStartTo,
    f.voivodeship,
    f.city,
    f.postalCode,
    f.legalForm,
    f.nameWords,
  ]);
}
