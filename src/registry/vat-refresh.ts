import { sql } from 'kysely';
import type { RegistryExecutor } from './store/executor.ts';

/**
 * The NIPs the VAT white list re-checks on a daily run. The list has no change feed and a small
 * daily request budget (30 NIPs a request), so it cannot cover the registry: it covers what
 * someone watches, oldest watch first, streamed in pages so memory stays flat.
 */
export function watchedNips(db: RegistryExecutor, pageSize = 5000): (date: string) => AsyncIterable<string> {
  return async function* () {
    // In key order, which for NIPs is their own order; no valid NIP is all zeros.
    let after = '0000000000';
    for (;;) {
      const { rows } = await sql<{ key: string; value: string }>`
        SELECT DISTINCT ci.key, identifier_value(ci.key) AS value
          FROM watchlist w
          JOIN company_identifiers ci ON ci.company_id = w.company_id
         WHERE w.removed_at IS NULL AND ci.key > identifier_key('NIP', ${after}) AND ci.key <= identifier_key('NIP', '9999999999')
         ORDER BY ci.key
         LIMIT ${pageSize}`.execute(db);
      for (const r of rows) yield r.value;
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.value;
    }
  };
}
