import { sql } from 'kysely';
import type { CompanySnapshot, CompanyStatus, IdentifierType } from '../../registry/model.ts';
import { byDisplayOrder } from '../../registry/sources/display-order.ts';
import type { RegistryExecutor } from '../../registry/store.ts';
import type { MatchRow } from './match-index.ts';
import { matchRowOf } from './rows.ts';

/**
 * Data access of the match module: the rows its index is built from (all of them through a
 * cursor, or those of the companies a run changed) and the display data of the candidates shown.
 */

const FIELD = '\x1f';
const RECORD = '\x1e';
const clean = (e: ReturnType<typeof sql>) => sql`translate(${e}, chr(30) || chr(31), '  ')`;

/**
 * The street of a stored snapshot (text): the first non-empty one of its profiles, in their order,
 * '' when none. One jsonpath over the snapshot as jsonb: the subquery over json_array_elements it
 * replaces cost PostgreSQL about 69 µs a company against 24 (a full build reads every company:
 * about 270 s of PostgreSQL's time a build at 4.1 million, docs/benchmarks.md).
 */
export const streetOf = (snapshot: ReturnType<typeof sql>) =>
  sql`coalesce(jsonb_path_query_first(${snapshot}::jsonb, '$.profiles[*].address.street ? (@.type() == "string" && @ != "")') #>> '{}', '')`;

// One text per company: node-postgres spends about a microsecond per field it parses.
// Identifiers are company_identifiers' keys.
const MATCH_LINE = sql`concat_ws(chr(31), c.id, c.status, ${clean(sql`c.name`)}, ${clean(sql`coalesce(c.city_folded, '')`)}, coalesce(c.postal_code, ''),
  ${clean(streetOf(sql`c.snapshot`))},
  coalesce((SELECT string_agg(ci.key::text, ',') FROM company_identifiers ci WHERE ci.company_id = c.id), ''))`;

function parseLines(text: string | null, onRow: (row: MatchRow) => void): void {
  if (!text) return;
  for (const line of text.split(RECORD)) {
    const f = line.split(FIELD);
    if (f.length !== 7) throw new Error(`match index: unexpected row shape (${f.length} fields)`);
    onRow(
      matchRowOf({
        id: Number(f[0]),
        status: f[1] as CompanyStatus,
        name: f[2]!,
        city: f[3] || null,
        postalCode: f[4] || null,
        street: f[5] || null,
        identifierKeys: f[6] === '' ? [] : f[6]!.split(',').map(Number),
      }),
    );
  }
}

/** Every company's match row in id order, in chunks. Run it inside a transaction: the rows come through a cursor. */
export async function readMatchRows(
  trx: RegistryExecutor,
  chunkSize: number,
  onChunk: (rows: MatchRow[]) => Promise<void>,
): Promise<number> {
  await sql`DECLARE match_index_rows NO SCROLL CURSOR FOR SELECT ${MATCH_LINE} AS line FROM companies c ORDER BY c.id`.execute(trx);
  let total = 0;
  for (;;) {
    const { rows } = await sql<{
      line: string;
    }>`FETCH FORWARD ${sql.raw(String(Math.max(1, Math.floor(chunkSize))))} FROM match_index_rows`.execute(trx);
    if (rows.length === 0) break;
    const out: MatchRow[] = [];
    for (const r of rows) parseLines(r.line, (row) => out.push(row));
    total += out.length;
    await onChunk(out);
  }
  await sql`CLOSE match_index_rows`.execute(trx);
  return total;
}

/** The match rows of these companies (companies.id), those that still exist. */
export async function readMatchRowsByIds(db: RegistryExecutor, ids: readonly string[]): Promise<MatchRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ lines: string | null }>`
    SELECT string_agg(${MATCH_LINE}, chr(30)) AS lines FROM companies c
    WHERE c.id = ANY(string_to_array(${ids.join(',')}, ',')::bigint[])`.execute(db);
  const out: MatchRow[] = [];
  parseLines(rows[0]!.lines, (r) => out.push(r));
  return out;
}

export interface MatchDisplayRow {
  identifiers: { type: IdentifierType; value: string }[];
  name: string;
  city: string | null;
  postal_code: string | null;
  status: CompanyStatus;
}

/** What a candidate shows, by companies.id: identifiers, name, and the address of the profile shown first. */
export async function findMatchDisplayRows(db: RegistryExecutor, ids: readonly number[]): Promise<Map<number, MatchDisplayRow>> {
  const out = new Map<number, MatchDisplayRow>();
  if (ids.length === 0) return out;
  const { rows } = await sql<{ id: string; name: string; status: CompanyStatus; snapshot: CompanySnapshot }>`
    SELECT c.id::text AS id, c.name, c.status, c.snapshot::json AS snapshot FROM companies c WHERE c.id = ANY(${ids.map(String)}::bigint[])`.execute(
    db,
  );
  for (const r of rows) {
    const address =
      byDisplayOrder(r.snapshot.profiles ?? []).find((p) => p.address && (p.address.city || p.address.postal_code))?.address ?? null;
    out.set(Number(r.id), {
      identifiers: (r.snapshot.identity?.identifiers ?? []).map((i) => ({ type: i.type, value: i.value })),
      name: r.name,
      city: address?.city || null,
      postal_code: address?.postal_code || null,
      status: r.status,
    });
  }
  return out;
}
