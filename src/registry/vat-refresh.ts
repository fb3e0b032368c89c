import { sql } from 'kysely';
import type { RegistryExecutor } from './store/executor.ts';

/**
 * The NIPs the VAT white list re-checks on a daily run: those of every watched company. The list
 * has no change feed and a small daily request budget, so it cannot cover the registry: it covers
 * what someone watches, streamed in pages so memory stays flat.
 *
 * Where the budget covers fewer NIPs than are watched (`perDay`), each day starts where the
 * previous one's budget ran out, in NIP order, wrapping round: day k starts at position
 * k × perDay (mod the number watched), so every watched company is checked at least once every
 * ceil(watched / perDay) days rather than the same first ones every day.
 */

/** What the connector's default budget covers in a day: 100 search requests of 30 NIPs (docs/connectors.md). */
export const VAT_NIPS_PER_DAY = 3_000;

const FIRST_KEY = '0000000000';
const LAST_KEY = '9999999999';

export function watchedNips(db: RegistryExecutor, pageSize = 5000, perDay = VAT_NIPS_PER_DAY): (date: string) => AsyncIterable<string> {
  async function* range(after: string, upTo: string): AsyncGenerator<string> {
    // In key order, which for NIPs is their own order; no valid NIP is all zeros.
    for (;;) {
      const { rows } = await sql<{ value: string }>`
        SELECT DISTINCT ci.key, identifier_value(ci.key) AS value
          FROM watchlist w
          JOIN company_identifiers ci ON ci.company_id = w.company_id
         WHERE w.removed_at IS NULL AND ci.key > identifier_key('NIP', ${after}) AND ci.key <= identifier_key('NIP', ${upTo})
         ORDER BY ci.key
         LIMIT ${pageSize}`.execute(db);
      for (const r of rows) yield r.value;
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.value;
    }
  }

  /** The NIP after which day `date` starts (the first one's predecessor: all zeros). */
  async function startAfter(date: string): Promise<string> {
    const { rows } = await sql<{ n: number }>`
      SELECT count(DISTINCT ci.key)::int AS n FROM watchlist w JOIN company_identifiers ci ON ci.company_id = w.company_id
       WHERE w.removed_at IS NULL AND ci.key > identifier_key('NIP', ${FIRST_KEY}) AND ci.key <= identifier_key('NIP', ${LAST_KEY})`.execute(
      db,
    );
    const watched = rows[0]?.n ?? 0;
    if (watched <= perDay) return FIRST_KEY;
    const day = Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
    const position = Number.isFinite(day) ? (day * perDay) % watched : 0;
    if (position === 0) return FIRST_KEY;
    const { rows: at } = await sql<{ value: string }>`
      SELECT identifier_value(key) AS value FROM (
        SELECT DISTINCT ci.key FROM watchlist w JOIN company_identifiers ci ON ci.company_id = w.company_id
         WHERE w.removed_at IS NULL AND ci.key > identifier_key('NIP', ${FIRST_KEY}) AND ci.key <= identifier_key('NIP', ${LAST_KEY})
      ) k ORDER BY key OFFSET ${position - 1} LIMIT 1`.execute(db);
    return at[0]?.value ?? FIRST_KEY;
  }

  return async function* (date: string) {
    const after = await startAfter(date);
    yield* range(after, LAST_KEY);
    if (after !== FIRST_KEY) yield* range(FIRST_KEY, after);
  };
}
