import { identifierKey } from '../../lib/identifiers.ts';
import type { CompanySnapshot } from '../../registry/model.ts';
import { deriveCompanyColumns } from '../../registry/store/search-columns.ts';
import type { MatchRow } from './match-index.ts';
import { cityKey, nameTokens, postalKey, streetKey } from './normalize.ts';

/**
 * A company's match row from its stored columns (what src/modules/match/repo.ts reads) or from a
 * snapshot (benchmarks and the evaluation, which build an index without a database). Both give
 * the same row for the same company.
 */

export interface StoredMatchColumns {
  id: number;
  status: MatchRow['status'];
  name: string;
  /** companies.city_folded */
  city: string | null;
  /** companies.postal_code (digits) */
  postalCode: string | null;
  /** The first non-empty street of the snapshot's profiles, in stored order. */
  street: string | null;
  identifierKeys: readonly number[];
}

export function matchRowOf(c: StoredMatchColumns): MatchRow {
  return {
    id: c.id,
    status: c.status,
    tokens: nameTokens(c.name),
    city: cityKey(c.city),
    street: streetKey(c.street),
    postal: postalKey(c.postalCode),
    identifierKeys: c.identifierKeys,
  };
}

export function matchRowOfSnapshot(id: number, snapshot: CompanySnapshot): MatchRow {
  const columns = deriveCompanyColumns(snapshot);
  const street = snapshot.profiles.map((p) => p.address?.street ?? '').find((s) => s !== '') ?? null;
  const keys = snapshot.identity.identifiers
    .map((i) => identifierKey(i.type, i.value))
    .filter((k) => k !== null)
    .map(Number);
  return matchRowOf({
    id,
    status: columns.status,
    name: columns.name,
    city: columns.city_folded,
    postalCode: columns.postal_code,
    street,
    identifierKeys: keys,
  });
}
