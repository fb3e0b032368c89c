import type { CompanyStatus } from '../../registry/model.ts';
import type { IndexRow } from './search-index-rows.ts';

/**
 * Index rows as the repository reads them (repo.ts INDEX_LINE): one line per company, fields
 * split by U+001F, lines by U+001E (neither occurs in a field). Text crosses to a build's worker
 * thread as it came from PostgreSQL and is parsed there.
 */

export const INDEX_FIELD = '\x1f';
export const INDEX_RECORD = '\x1e';

export function parseIndexLines(text: string | null, onRow: (row: IndexRow) => void): void {
  if (!text) return;
  for (const line of text.split(INDEX_RECORD)) {
    const f = line.split(INDEX_FIELD);
    if (f.length !== 11) throw new Error(`search index: unexpected row shape (${f.length} fields)`);
    const flags = Number(f[8]);
    onRow({
      id: f[0]!,
      activityStart: f[1] === '' ? null : f[1]!,
      primaryIdentifier: f[2]!,
      status: f[3] as CompanyStatus,
      voivodeship: f[4] === '' ? null : f[4]!,
      city: f[5] === '' ? null : f[5]!,
      postalCode: f[6] === '' ? null : f[6]!,
      legalForm: f[7] === '' ? null : f[7]!,
      hasPhone: (flags & 1) !== 0,
      hasEmail: (flags & 2) !== 0,
      hasFax: (flags & 4) !== 0,
      activityCodes: f[9] === '' ? [] : f[9]!.split(','),
      nameFolded: f[10]!,
    });
  }
}
