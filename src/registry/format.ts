import type { Address, LocalUnit, Person } from './model.ts';

/**
 * The one-line value formats of docs/api-contract.md, "Values". Event values are compared and stored in these
 * forms, so they must be deterministic: sorting is by UTF-16 code unit, never locale-dependent.
 */

const FIVE_DIGITS = /^\d{5}$/;

function clean(s: string | null | undefined): string {
  return typeof s === 'string' ? s.trim() : '';
}

/** `00950` → `00-950`; anything that is not five digits is shown as the registry gave it. */
export function formatPostalCode(postalCode: string): string {
  const trimmed = clean(postalCode);
  const digits = trimmed.replace(/\D+/g, '');
  return FIVE_DIGITS.test(digits) ? `${digits.slice(0, 2)}-${digits.slice(2)}` : trimmed;
}

/**
 * `street building[/apartment], postal_code city`, leaving out what is empty (no street:
 * `building, postal city`). An address with nothing to show is null, like no address at all.
 */
export function formatAddress(a: Address | null): string | null {
  if (a === null || a === undefined) return null;
  const building = clean(a.building);
  const apartment = clean(a.apartment);
  const number = building && apartment ? `${building}/${apartment}` : building || apartment;
  const streetPart = joinNonEmpty(clean(a.street), number, ' ');
  const cityPart = joinNonEmpty(formatPostalCode(a.postal_code), clean(a.city), ' ');
  const line = joinNonEmpty(streetPart, cityPart, ', ');
  return line === '' ? null : line;
}

function joinNonEmpty(a: string, b: string, separator: string): string {
  if (a === '') return b;
  if (b === '') return a;
  return a + separator + b;
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Distinct non-empty values, trimmed and sorted: the canonical form of a set-valued field. */
export function sortedDistinct(values: Iterable<string>): string[] {
  const seen = new Set<string>();
  for (const v of values) {
    const trimmed = clean(v);
    if (trimmed !== '') seen.add(trimmed);
  }
  return [...seen].sort(compareStrings);
}

/** Sorted distinct values joined with `, `; null when there are none. */
export function joinSorted(values: Iterable<string>): string | null {
  const list = sortedDistinct(values);
  return list.length === 0 ? null : list.join(', ');
}

/** `identifier name` */
export function formatUnit(u: Pick<LocalUnit, 'identifier' | 'name'>): string {
  return joinNonEmpty(clean(u.identifier), clean(u.name), ' ');
}

/** `full_name (role)`; just the name when the role is unknown. */
export function formatPerson(p: Person): string {
  const name = clean(p.full_name);
  const role = clean(p.role);
  return role === '' ? name : `${name} (${role})`;
}
