import type { CompanyStatus } from '../../registry/model.ts';
import { isStoredPostalCode, type SearchFilters } from './filters.ts';

/**
 * The search index: every company's search columns in memory, in result order (activity_start
 * newest first, then primary identifier), as typed arrays, with posting lists for the selective
 * filters (city, postal code, activity code, name word). A query is one pass over the candidate
 * rows: the rows of its most selective posting list, or the slice of the order its date bounds
 * select, or every row. Counting a million rows this way takes a few milliseconds, which is what
 * makes an exact `total` affordable for any filter combination (docs/search.md).
 *
 * The main part is immutable once built. Companies that change afterwards (on-demand imports)
 * are masked out of it and kept in a small delta, merged into every answer.
 */

/** One company's search columns, as the repository reads them. */
export interface IndexRow {
  id: string;
  /** YYYY-MM-DD or null. */
  activityStart: string | null;
  primaryIdentifier: string;
  status: CompanyStatus;
  voivodeship: string | null;
  city: string | null;
  /** Five digits, or null. */
  postalCode: string | null;
  legalForm: string | null;
  hasPhone: boolean;
  hasEmail: boolean;
  hasFax: boolean;
  activityCodes: readonly string[];
  /** The folded name (companies.name_folded). */
  nameFolded: string;
}

export interface IndexAnswer {
  total: number;
  /** Company ids of the requested window, in result order. */
  ids: string[];
}

export const STATUS_CODE: Record<CompanyStatus, number> = { ACTIVE: 0, SUSPENDED: 1, DELETED: 2 };
export const PHONE = 1;
export const EMAIL = 2;
export const FAX = 4;
/** Sorts after every real day in a descending order: companies without a start date come last. */
export const NO_DAY = -2147483648;
export const DAY_MS = 86_400_000;
export const WORD_SPLIT = /[^a-z0-9]+/;

export function dayOf(date: string | null): number {
  if (date === null) return NO_DAY;
  return Math.round(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

/**
 * An order-preserving number for identifiers of up to ten digits: each position is 0 (past the
 * end) or digit + 1, in base 11, so `12` < `123` < `13` as with text comparison. Anything else
 * (never seen: identifiers are stored as digits) sorts after every digit.
 */
export function identifierSortKey(s: string): number {
  let key = 0;
  for (let i = 0; i < 10; i++) {
    let d = 0;
    if (i < s.length) {
      const c = s.charCodeAt(i) - 48;
      d = c >= 0 && c <= 9 ? c + 1 : 10;
    }
    key = key * 11 + d;
  }
  return key;
}

export function nameWords(nameFolded: string): string[] {
  return [...new Set(nameFolded.split(WORD_SPLIT).filter((w) => w !== ''))];
}

export function flagsOf(r: IndexRow): number {
  return (r.hasPhone ? PHONE : 0) | (r.hasEmail ? EMAIL : 0) | (r.hasFax ? FAX : 0);
}

export const CONTACT_FLAG = { phone: PHONE, email: EMAIL, fax: FAX } as const;

/** Whether one row passes a filter set: the reference semantics, used for the delta (`words`: its nameWords, when known). */
export function rowMatches(r: IndexRow, f: SearchFilters, words?: readonly string[]): boolean {
  if (r.status !== f.status) return false;
  if (f.hasContact !== null && (flagsOf(r) & CONTACT_FLAG[f.hasContact]) === 0) return false;
  if (f.voivodeship !== null && r.voivodeship !== f.voivodeship) return false;
  if (f.city !== null && r.city !== f.city) return false;
  if (f.postalCode !== null && (r.postalCode !== f.postalCode || !isStoredPostalCode(f.postalCode))) return false;
  if (f.legalForm !== null && r.legalForm !== f.legalForm) return false;
  if (f.activityStartFrom !== null && (r.activityStart === null || r.activityStart < f.activityStartFrom)) return false;
  if (f.activityStartTo !== null && (r.activityStart === null || r.activityStart > f.activityStartTo)) return false;
  if (f.activityCodes.length > 0 && !r.activityCodes.some((c) => f.activityCodes.includes(c))) return false;
  if (f.activityPrefix !== null && !r.activityCodes.some((c) => c.startsWith(f.activityPrefix!))) return false;
  if (f.nameWords.length > 0) {
    const ws = words ?? nameWords(r.nameFolded);
    if (!f.nameWords.every((q) => ws.some((w) => w.startsWith(q)))) return false;
  }
  return true;
}

/** Result order: activity_start newest first (none last), then primary identifier, then id. */
export function compareRows(a: { day: number; key: number; id: number }, b: { day: number; key: number; id: number }): number {
  return b.day - a.day || a.key - b.key || a.id - b.id;
}

/** A company of the index's delta: its row with the order keys and name words worked out once. */
export interface DeltaRow {
  row: IndexRow;
  day: number;
  key: number;
  id: number;
  words: string[];
}

export function deltaRowOf(row: IndexRow): DeltaRow {
  return {
    row,
    day: dayOf(row.activityStart),
    key: identifierSortKey(row.primaryIdentifier),
    id: Number(row.id),
    words: nameWords(row.nameFolded),
  };
}
