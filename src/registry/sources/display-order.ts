import type { Profile, SourceName } from '../model.ts';

/**
 * Which registry speaks first, the most authoritative for companies first: for a company's display
 * fields and search columns (store/search-columns.ts), a search result's address and contacts
 * (modules/companies/service.ts), and the order an on-demand import merges its sources' answers in
 * (import.ts). docs/registry.md describes the sources.
 */
export const SOURCE_DISPLAY_ORDER: readonly SourceName[] = ['krs', 'ceidg', 'bir', 'vat', 'file', 'synthetic'];

/** A source's place in SOURCE_DISPLAY_ORDER; an unknown one comes last. */
export function sourceRank(source: string): number {
  const i = (SOURCE_DISPLAY_ORDER as readonly string[]).indexOf(source);
  return i < 0 ? SOURCE_DISPLAY_ORDER.length : i;
}

/** The profiles in display order (a stable sort; the array itself when there is nothing to sort). */
export function byDisplayOrder(profiles: readonly Profile[]): readonly Profile[] {
  if (profiles.length <= 1) return profiles;
  return [...profiles].sort((a, b) => sourceRank(a.source) - sourceRank(b.source));
}
