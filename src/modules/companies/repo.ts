import { sql, type RawBuilder } from 'kysely';
import { executePrepared } from '../../db/prepared.ts';
import type { CompanySnapshot, CompanyStatus, Identifier, IdentifierType } from '../../registry/model.ts';
import { companyByKeyQuery, STORED_COMPANY_COLUMNS, type RegistryExecutor, type StoredCompany } from '../../registry/store.ts';
import { RUN_CHANGES_KEPT_DAYS } from '../../registry/store/daily-runs-repo.ts';
import { batchAttemptOf, batchUsageOf, chargeSteps, type ChargeArgs, type ChargeAttempt } from '../wallet/credits.ts';
import { usageBatchOutcome, usageBatchSteps, type UsageBatchRow } from '../wallet/ledger-batch.ts';
import { isStoredPostalCode, type SearchFilters } from './filters.ts';
import type { IndexAnswer, IndexRow } from './search-index-rows.ts';
import { INDEX_RECORD as RECORD, parseIndexLines as parseLines } from './search-index-lines.ts';
import { identifierKey } from '../../lib/identifiers.ts';

/**
 * Data access of the companies module: the search in SQL (the reference semantics, and what
 * answers while the in-memory index is being built), the rows the index is built from, and the
 * display data of a page of results. Every value reaches PostgreSQL as a parameter.
 */

// ------------------------------------------------------------------------------------------------
// Search in SQL

const CONTACT_COLUMN = { phone: sql.ref('c.has_phone'), email: sql.ref('c.has_email'), fax: sql.ref('c.has_fax') } as const;

function searchConditions(f: SearchFilters): RawBuilder<unknown>[] {
  const where: RawBuilder<unknown>[] = [sql`c.status = ${f.status}`];
  if (f.hasContact !== null) where.push(sql`${CONTACT_COLUMN[f.hasContact]}`);
  if (f.activityCodes.length > 0) where.push(sql`c.activity_codes && ${f.activityCodes}::text[]`);
  if (f.activityPrefix !== null) {
    where.push(sql`EXISTS (SELECT 1 FROM unnest(c.activity_codes) AS code WHERE starts_with(code, ${f.activityPrefix}::text))`);
  }
  if (f.activityStartFrom !== null) where.push(sql`c.activity_start >= ${f.activityStartFrom}::date`);
  if (f.activityStartTo !== null) where.push(sql`c.activity_start <= ${f.activityStartTo}::date`);
  if (f.voivodeship !== null) where.push(sql`c.voivodeship_folded = ${f.voivodeship}`);
  if (f.city !== null) where.push(sql`c.city_folded = ${f.city}`);
  if (f.postalCode !== null) where.push(isStoredPostalCode(f.postalCode) ? sql`c.postal_code = ${f.postalCode}` : sql`false`);
  if (f.legalForm !== null) where.push(sql`c.legal_form = ${f.legalForm}`);
  // A word of the name starts with each query word; name words are split at anything but a-z0-9,
  // as the in-memory index splits them, so a query word with any other letter is no name's word.
  for (const w of f.nameWords) where.push(/^[a-z0-9]+$/.test(w) ? sql`c.name_folded ~ ${`(^|[^a-z0-9])${w}`}` : sql`false`);
  return where;
}

/** Result order: activity_start newest first (none last), then primary identifier, then id. */
const RESULT_ORDER = sql`c.activity_start DESC NULLS LAST, c.primary_identifier COLLATE "C", c.id`;

export async function searchCompaniesSql(
  db: RegistryExecutor,
  f: SearchFilters,
  offset: number,
  limit: number,
  timeoutMs = 10_000,
): Promise<IndexAnswer> {
  const where = sql.join(searchConditions(f), sql` AND `);
  // One transaction so that a runaway filter (a cold start on a large registry) is cut off.
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute(trx);
    const { rows: counted } = await sql<{ n: string }>`SELECT count(*) AS n FROM companies c WHERE ${where}`.execute(trx);
    const total = Number(counted[0]!.n);
    if (offset >= total) return { total, ids: [] };
    const { rows } = await sql<{ id: string }>`
      SELECT c.id FROM companies c WHERE ${where} ORDER BY ${RESULT_ORDER} LIMIT ${limit} OFFSET ${offset}`.execute(trx);
    return { total, ids: rows.map((r) => String(r.id)) };
  });
}

// ------------------------------------------------------------------------------------------------
// A company, paid for

/**
 * The stored company with this identifier, the registry's date (readDataAsOf) and, in the same
 * statement, its charge (taken only when the company is there): a snapshot is one round trip.
 * `balanceAfter` is null when nothing was taken (free, or refused: ask chargeOutcome). Null when
 * no company has the identifier.
 */
export async function findCompanyCharging(
  db: RegistryExecutor,
  identifier: Identifier,
  charge: ChargeArgs,
): Promise<{ company: StoredCompany; dataAsOf: string | null; balanceAfter: string | null } | null> {
  const key = identifierKey(identifier.type, identifier.value);
  if (key === null) return null;
  const steps = chargeSteps(charge, sql`EXISTS (SELECT 1 FROM found)`);
  type Row = StoredCompany & { data_as_of: string | null; balance_after: string | null };
  const { rows } = steps
    ? await executePrepared(
        db,
        sql<Row>`
        WITH found AS (${companyByKeyQuery(key)}), ${steps}
        SELECT found.*, ${DATA_AS_OF} AS data_as_of, (SELECT balance_after FROM ledger_ins) AS balance_after FROM found`,
      )
    : await executePrepared(
        db,
        sql<Row>`SELECT f.*, ${DATA_AS_OF} AS data_as_of, NULL AS balance_after FROM (${companyByKeyQuery(key)}) f`,
      );
  const row = rows[0];
  if (!row) return null;
  const { balance_after: balanceAfter, data_as_of: dataAsOf, ...company } = row;
  return { company, dataAsOf, balanceAfter };
}

/** One paid read of a batch: the identifier asked for and its (priced, token-checked) charge. */
export interface ChargedRead {
  identifier: Identifier;
  charge: ChargeArgs;
}

/**
 * findCompanyCharging for several requests in one statement (one round trip, one commit): each
 * company read, the registry's date, and each charge (ledger-batch.ts, taken only for a company
 * found). Per read, in order: null when no company has the identifier (nothing charged), else the
 * company and what its charge came to (taken, or refused with the reason: no second read).
 * Every charge must have a price (batchUsageOf not null).
 */
export async function findCompaniesCharging(
  db: RegistryExecutor,
  reads: readonly ChargedRead[],
): Promise<({ company: StoredCompany; dataAsOf: string | null; attempt: ChargeAttempt } | null)[]> {
  const usages = reads.map((r) => {
    const u = batchUsageOf(r.charge);
    if (!u) throw new Error('findCompaniesCharging: a free read is not batched');
    return u;
  });
  const keys = reads.map((r) => identifierKey(r.identifier.type, r.identifier.value));
  const steps = usageBatchSteps(usages, (i) => sql`${i} IN (SELECT f.i FROM found f)`);
  type Row = StoredCompany & UsageBatchRow & { i: string; found: boolean; data_as_of: string | null };
  const { rows } = await executePrepared(
    db,
    sql<Row>`
    WITH req_keys AS (SELECT * FROM unnest(${keys}::bigint[]) WITH ORDINALITY AS k(key, i)),
    found AS (
      SELECT k.i, ${STORED_COMPANY_COLUMNS}
        FROM req_keys k JOIN company_identifiers ci ON ci.key = k.key JOIN companies c ON c.id = ci.company_id
    ), ${steps}
    SELECT k.i, f.i IS NOT NULL AS found, f.id, f.primary_identifier_type, f.primary_identifier, f.name, f.status, f.snapshot,
           f.first_seen_date, f.last_changed_date, f.updated_at, ${DATA_AS_OF} AS data_as_of, ${usageBatchOutcome(sql`k.i`)}
      FROM req_keys k LEFT JOIN found f ON f.i = k.i
     ORDER BY k.i`,
  );
  if (rows.length !== reads.length) throw new Error(`findCompaniesCharging: ${reads.length} reads answered ${rows.length} rows`);
  return rows.map((row, n) => {
    if (!row.found) return null;
    const { i: _i, found: _found, data_as_of: dataAsOf, bc_balance_after, bc_token_live, bc_balance_left, ...company } = row;
    return { company, dataAsOf, attempt: batchAttemptOf({ bc_balance_after, bc_token_live, bc_balance_left }, usages[n]!) };
  });
}

// ------------------------------------------------------------------------------------------------
// Display data

export interface ResultRow {
  id: string;
  name: string;
  status: CompanyStatus;
  activity_start: string | null;
  main_activity: string | null;
  snapshot: CompanySnapshot;
}

/**
 * The companies of a page, in the order of `ids`. The snapshot is read as the text it is stored
 * as and parsed here: `snapshot::json` made PostgreSQL validate every page's 20 snapshots (about
 * 26 KB of JSON) before node-postgres parsed them again.
 */
export async function findResultRows(db: RegistryExecutor, ids: readonly string[]): Promise<ResultRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await executePrepared(
    db,
    sql<Omit<ResultRow, 'snapshot'> & { snapshot: string }>`
    SELECT c.id::text AS id, c.name, c.status, to_char(c.activity_start, 'YYYY-MM-DD') AS activity_start, c.main_activity, c.snapshot
    FROM companies c WHERE c.id = ANY(${ids}::bigint[])`,
  );
  const byId = new Map(rows.map((r) => [r.id, r] as const));
  const out: ResultRow[] = [];
  for (const id of ids) {
    const r = byId.get(id);
    if (r !== undefined) out.push({ ...r, snapshot: JSON.parse(r.snapshot) as CompanySnapshot });
  }
  return out;
}

/**
 * One page of a batch: the companies of a search's page, in order, the revision of each that the
 * caller already holds the display data of (0: none), and its (priced, token-checked) charge.
 */
export interface ChargedPage {
  ids: readonly string[];
  known: readonly number[];
  charge: ChargeArgs;
}

/**
 * A company of a page: its revision and display data, or `row` null when its revision is the one
 * the caller holds. A company's display columns and snapshot change only with its revision
 * (src/registry/store/companies-repo.ts updates them together, revision + 1; ids are never reused),
 * so that revision's data is still the company's: exact, not a cache that could be stale.
 */
export interface PageEntry {
  id: string;
  revision: number;
  row: ResultRow | null;
}

/**
 * findResultRows for the pages of several searches and, in the same statement, each search's
 * charge (ledger-batch.ts: one round trip and one commit for all of them; a search is paid for
 * whether or not its page holds results). Per page, in order: its companies, in the order of its
 * ids (the data only of those whose revision differs from the known one), and what its charge
 * came to (taken, or refused with the reason). Every charge must have a price.
 *
 * `runs`: findRunProgress(asked) in the same statement, hence in the same snapshot, which starts
 * after every search of the batch arrived: the search index's follow check (search-engine.ts,
 * `confirm`) without a round trip of its own.
 */
export async function findResultPagesCharging(
  db: RegistryExecutor,
  pages: readonly ChargedPage[],
  asked: RunsAsked = NO_RUNS_ASKED,
): Promise<{ pages: { entries: PageEntry[]; attempt: ChargeAttempt }[]; runs: RunProgress[] }> {
  const usages = pages.map((p) => {
    const u = batchUsageOf(p.charge);
    if (!u) throw new Error('findResultPagesCharging: a free search is not batched');
    return u;
  });
  // The page entries as four comma lists (ids are digits, the rest integers): node-postgres
  // writes an array parameter element by element, about 15 µs a search for four arrays of 20.
  const ids: string[] = [];
  const of: number[] = [];
  const pos: number[] = [];
  const known: number[] = [];
  pages.forEach((p, n) =>
    p.ids.forEach((id, k) => {
      ids.push(id);
      of.push(n + 1);
      pos.push(k);
      known.push(p.known[k] ?? 0);
    }),
  );
  /**
   * One row a page, not one a company: node-postgres parses each field of each row (13 columns
   * of 20 rows a search was about half of this statement's time in the API process). `revs`:
   * `pos:id:revision` of each company found, in page order; `fresh`: a JSON array of
   * `[pos, name, status, activity_start, main_activity, snapshot]` of the companies whose
   * revision is not the one held, the snapshot spliced in as the text it is stored as (no JSON
   * validation by PostgreSQL), parsed here with the rest in one JSON.parse. Built before the
   * grouping (OFFSET 0 keeps the planner from pulling the subquery up), so the sort that groups
   * carries a company's snapshot only when it is sent (sorting 20 whole rows a search was about a
   * fifth of the statement's execution, EXPLAIN ANALYZE).
   */
  type Row = UsageBatchRow & {
    i: number;
    revs: string | null;
    fresh: string | null;
    /** On the first page's row only: findRunProgress(asked), null for none. */
    runs: RunProgress[] | null;
  };
  const list = (values: readonly (string | number)[]) => values.join(',');
  const { rows } = await executePrepared(
    db,
    sql<Row>`
    WITH page_ids AS (
      SELECT * FROM unnest(string_to_array(${list(ids)}, ',')::bigint[], string_to_array(${list(of)}, ',')::int[],
                           string_to_array(${list(pos)}, ',')::int[], string_to_array(${list(known)}, ',')::int[]) AS p(id, i, pos, known)
    ),
    ${usageBatchSteps(usages, () => sql`true`)},
    outcome AS (SELECT r.i, ${usageBatchOutcome(sql`r.i`)} FROM bc_req r),
    follow AS (SELECT json_agg(f ORDER BY f.id) AS runs FROM (${runProgressQuery(asked)}) f),
    entries AS (
      SELECT e.i, string_agg(e.rev, ',' ORDER BY e.pos) AS revs, '[' || string_agg(e.fresh, ',' ORDER BY e.pos) || ']' AS fresh
        FROM (SELECT p.i, p.pos, p.pos || ':' || c.id || ':' || c.revision AS rev,
                     CASE WHEN c.revision <> p.known
                       THEN left(json_build_array(p.pos, c.name, c.status, to_char(c.activity_start, 'YYYY-MM-DD'), c.main_activity)::text, -1)
                            || ',' || c.snapshot || ']' END AS fresh
                FROM page_ids p JOIN companies c ON c.id = p.id
              OFFSET 0) e
       GROUP BY e.i
    )
    SELECT o.i::int AS i, e.revs, e.fresh, o.bc_balance_after, o.bc_token_live, o.bc_balance_left,
           CASE WHEN o.i = 1 THEN (SELECT runs FROM follow) END AS runs
      FROM outcome o LEFT JOIN entries e ON e.i = o.i`,
  );
  type Fresh = [number, string, ResultRow['status'], string | null, string | null, CompanySnapshot];
  const out = pages.map((_, n) => ({ entries: [] as PageEntry[], outcome: null as UsageBatchRow | null, n }));
  let runs: RunProgress[] = [];
  for (const r of rows) {
    if (r.runs !== null) runs = r.runs;
    const page = out[r.i - 1];
    if (page === undefined || page.outcome !== null) throw new Error(`findResultPagesCharging: a row of page ${r.i} of ${pages.length}`);
    page.outcome = { bc_balance_after: r.bc_balance_after, bc_token_live: r.bc_token_live, bc_balance_left: r.bc_balance_left };
    // A company deleted since the search (only a lost race does that) is not in revs.
    if (r.revs === null) continue;
    const fresh = r.fresh === null ? [] : (JSON.parse(r.fresh) as Fresh[]);
    let f = 0;
    for (const entry of r.revs.split(',')) {
      const a = entry.indexOf(':');
      const b = entry.indexOf(':', a + 1);
      const at = Number(entry.slice(0, a));
      const id = entry.slice(a + 1, b);
      let row: ResultRow | null = null;
      const next = fresh[f];
      if (next !== undefined && next[0] === at) {
        row = { id, name: next[1], status: next[2], activity_start: next[3], main_activity: next[4], snapshot: next[5] };
        f++;
      }
      page.entries.push({ id, revision: Number(entry.slice(b + 1)), row });
    }
  }
  return {
    pages: out.map((p) => {
      if (p.outcome === null) throw new Error(`findResultPagesCharging: no outcome for page ${p.n + 1}`);
      return { entries: p.entries, attempt: batchAttemptOf(p.outcome, usages[p.n]!) };
    }),
    runs,
  };
}

// ------------------------------------------------------------------------------------------------
// Index rows

// One text per chunk instead of a row per company: node-postgres spends about a microsecond on
// every field it parses, which for twelve fields of millions of companies is most of a build.
const INDEX_LINE = sql`concat_ws(chr(31), c.id, coalesce(to_char(c.activity_start, 'YYYY-MM-DD'), ''),
  translate(c.primary_identifier, chr(30) || chr(31), '  '), c.status,
  translate(coalesce(c.voivodeship_folded, ''), chr(30) || chr(31), '  '),
  translate(coalesce(c.city_folded, ''), chr(30) || chr(31), '  '),
  coalesce(c.postal_code, ''), translate(coalesce(c.legal_form, ''), chr(30) || chr(31), '  '),
  (c.has_phone::int + 2 * c.has_email::int + 4 * c.has_fax::int),
  translate(array_to_string(c.activity_codes, ','), chr(30) || chr(31), '  '),
  translate(c.name_folded, chr(30) || chr(31), '  '))`;

/**
 * Every company's index row in result order (activity_start newest first, then primary identifier,
 * then id), handed over in chunks. Run it inside a transaction: the rows come through a cursor.
 * PostgreSQL sorts once; the index is then built without reordering anything.
 */
export async function readIndexRowsInOrder(
  trx: RegistryExecutor,
  chunkSize: number,
  onChunk: (rows: IndexRow[]) => Promise<void>,
): Promise<number> {
  return readIndexLinesInOrder(trx, chunkSize, async (lines) => {
    const out: IndexRow[] = [];
    parseLines(lines, (row) => out.push(row));
    await onChunk(out);
  });
}

/** readIndexRowsInOrder's chunks as index lines (search-index-lines.ts), unparsed. */
export async function readIndexLinesInOrder(
  trx: RegistryExecutor,
  chunkSize: number,
  onChunk: (lines: string) => Promise<void>,
): Promise<number> {
  // The sort holds one short line per company; give it memory rather than temporary files.
  await sql`SELECT set_config('work_mem', '256MB', true)`.execute(trx);
  await sql`DECLARE search_index_rows NO SCROLL CURSOR FOR
    SELECT ${INDEX_LINE} AS line FROM companies c ORDER BY ${RESULT_ORDER}`.execute(trx);
  let total = 0;
  for (;;) {
    const { rows } = await sql<{
      line: string;
    }>`FETCH FORWARD ${sql.raw(String(Math.max(1, Math.floor(chunkSize))))} FROM search_index_rows`.execute(trx);
    if (rows.length === 0) break;
    let text = rows[0]!.line;
    for (let i = 1; i < rows.length; i++) text += RECORD + rows[i]!.line;
    total += rows.length;
    await onChunk(text);
  }
  await sql`CLOSE search_index_rows`.execute(trx);
  return total;
}

/**
 * Every company's index line (search-index-lines.ts) in id order, not result order, one text per
 * chunk of `chunkSize` companies, aggregated by PostgreSQL: what a build in a worker thread reads
 * (search-index-worker.ts; the worker sorts). One string a chunk instead of a row object and a
 * string per company. Keyset pages over the primary key, so no sort and no cursor; run it in one
 * repeatable-read transaction for one snapshot. The next page is asked for before `onChunk` is
 * called with this one, so PostgreSQL reads it while this one is parsed.
 */
export async function readIndexLinesById(
  trx: RegistryExecutor,
  chunkSize: number,
  onChunk: (lines: string) => Promise<void>,
): Promise<number> {
  const n = Math.max(1, Math.floor(chunkSize));
  const page = async (after: number) => {
    const { rows } = await sql<{ lines: string | null; last: number | null; n: number }>`
      SELECT string_agg(s.line, chr(30)) AS lines, max(s.id)::float8 AS last, count(*)::int AS n
      FROM (SELECT c.id, ${INDEX_LINE} AS line FROM companies c WHERE c.id > ${after}::bigint ORDER BY c.id LIMIT ${n}) s`.execute(trx);
    return rows[0]!;
  };
  let total = 0;
  let next: Promise<Awaited<ReturnType<typeof page>>> | null = page(0);
  while (next !== null) {
    const r: Awaited<ReturnType<typeof page>> = await next;
    next = null;
    if (r.lines === null || r.last === null) break;
    total += r.n;
    if (r.n >= n) {
      next = page(r.last);
      // Awaited on the next turn; if onChunk throws first, the transaction's end reports the failure.
      next.catch(() => {});
    }
    await onChunk(r.lines);
  }
  return total;
}

/** The index rows of the companies holding any of these identifiers (stored forms). */
export async function readIndexRowsByIdentifiers(db: RegistryExecutor, identifiers: readonly Identifier[]): Promise<IndexRow[]> {
  const keys = identifiers.map((i) => identifierKey(i.type, i.value)).filter((k) => k !== null);
  if (keys.length === 0) return [];
  const out: IndexRow[] = [];
  const { rows } = await sql<{ lines: string | null }>`
    SELECT string_agg(${INDEX_LINE}, chr(30)) AS lines FROM companies c
    WHERE c.id IN (SELECT ci.company_id FROM company_identifiers ci WHERE ci.key = ANY(${keys}::bigint[]))`.execute(db);
  parseLines(rows[0]!.lines, (r) => out.push(r));
  return out;
}

// ------------------------------------------------------------------------------------------------
// Daily runs: what changed since the index was built

export interface RunState {
  id: number;
  status: 'running' | 'completed' | 'failed';
  attempts: number;
  /** Set for an on-demand import's run (daily_runs.kind 'import'): the identifier it imported. */
  import_identifier_type: IdentifierType | null;
  import_identifier_value: string | null;
}

/** Runs from id `fromId` on, every unfinished run, and the runs in `watch`. */
export async function findRunChanges(db: RegistryExecutor, fromId: number, watch: readonly number[]): Promise<RunState[]> {
  const { rows } = await sql<RunState>`
    SELECT id::float8 AS id, status, attempts, import_identifier_type, import_identifier_value FROM daily_runs
    WHERE id >= ${fromId}::bigint OR status <> 'completed' OR id = ANY(${watch}::bigint[])
    ORDER BY id`.execute(db);
  return rows;
}

/** The id the next run will be past, and the unfinished runs, as seen by this transaction. */
export async function readRunWatermark(db: RegistryExecutor): Promise<{ nextId: number; unfinished: RunState[] }> {
  const { rows } = await sql<{ max: number | null }>`SELECT max(id)::float8 AS max FROM daily_runs`.execute(db);
  const { rows: unfinished } = await sql<RunState>`
    SELECT id::float8 AS id, status, attempts, import_identifier_type, import_identifier_value FROM daily_runs WHERE status <> 'completed' ORDER BY id`.execute(
    db,
  );
  return { nextId: (rows[0]!.max ?? 0) + 1, unfinished };
}

/** The identifier an on-demand import's run (src/registry/import.ts) was for; null for any other run. */
export function importedIdentifierOf(run: RunState): Identifier | null {
  return run.import_identifier_type === null || run.import_identifier_value === null
    ? null
    : { type: run.import_identifier_type, value: run.import_identifier_value };
}

// ------------------------------------------------------------------------------------------------
// Freshness: which runs an index reflects, and what a finished run changed (index-follower.ts)

/**
 * The date of the latest completed daily run (imports left out): what an answer read from the
 * database now reflects. Null before any run completed.
 */
export async function readDataAsOf(db: RegistryExecutor): Promise<string | null> {
  const { rows } = await sql<{ d: string | null }>`SELECT ${DATA_AS_OF} AS d`.execute(db);
  return rows[0]!.d;
}

/** The date of the latest completed daily run (YYYY-MM-DD, or null), as a scalar subquery. */
const DATA_AS_OF = sql<
  string | null
>`(SELECT to_char(max(run_date), 'YYYY-MM-DD') FROM daily_runs WHERE status = 'completed' AND kind = 'daily')`;

/** A run as an index follower sees it. */
export interface RunProgress extends RunState {
  kind: 'daily' | 'import';
  run_date: string;
  /** Companies its committed batches wrote (daily_run_changes), a company written twice counted twice; 0 while running. */
  changed: number;
  /** Finished longer ago than its change lists are surely kept (they may be pruned). */
  changes_expired: boolean;
}

/** The runs a follower asks about: from id `fromId` on, every unfinished run, and the runs in `watch`. */
export interface RunsAsked {
  fromId: number;
  watch: readonly number[];
}

/** No run past the last possible id, and none watched: only the unfinished runs (a statement that needs no follow check). */
export const NO_RUNS_ASKED: RunsAsked = { fromId: Number.MAX_SAFE_INTEGER, watch: [] };

/**
 * findRunChanges with what a follower needs to apply each finished run as a delta. Prepared
 * (db/prepared.ts): the background follow, and searches answered outside a paid page statement
 * (which runs the same query itself: findResultPagesCharging).
 */
export async function findRunProgress(db: RegistryExecutor, fromId: number, watch: readonly number[]): Promise<RunProgress[]> {
  const { rows } = await executePrepared(db, runProgressQuery({ fromId, watch }));
  return rows;
}

/** findRunProgress's query. */
function runProgressQuery({ fromId, watch }: RunsAsked) {
  return sql<RunProgress>`
    SELECT r.id::float8 AS id, r.status, r.attempts, r.import_identifier_type, r.import_identifier_value, r.kind,
      to_char(r.run_date, 'YYYY-MM-DD') AS run_date,
      CASE WHEN r.status = 'running' THEN 0
        ELSE coalesce((SELECT sum(cardinality(x.company_ids)) FROM daily_run_changes x WHERE x.run_id = r.id), 0) END::float8 AS changed,
      coalesce(r.finished_at < now() - make_interval(days => ${RUN_CHANGES_KEPT_DAYS - 1}), false) AS changes_expired
    FROM daily_runs r
    WHERE r.id >= ${fromId}::bigint OR r.status <> 'completed' OR r.id = ANY(${watch}::bigint[])
    ORDER BY r.id`;
}

/**
 * The current index rows of every company these runs wrote, leaving out the change rows (batches)
 * in `except` (already read), in chunks of up to `chunkSize` companies, all read in one snapshot.
 * Returns the change rows it covered. A company deleted since (only a lost race does that, in its
 * own transaction) has no row.
 */
export async function readRunChangedRows(
  db: RegistryExecutor,
  runIds: readonly number[],
  chunkSize: number,
  onChunk: (rows: IndexRow[]) => Promise<void>,
  except: readonly string[] = [],
): Promise<{ changeIds: string[]; companies: number }> {
  if (runIds.length === 0) return { changeIds: [], companies: 0 };
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const { rows } = await sql<{ change_ids: string | null; ids: string | null }>`
      SELECT string_agg(DISTINCT c.id::text, ',') AS change_ids, string_agg(DISTINCT x.id::text, ',') AS ids
      FROM daily_run_changes c CROSS JOIN LATERAL unnest(c.company_ids) AS x(id)
      WHERE c.run_id = ANY(${runIds.map(String)}::bigint[]) AND NOT (c.id = ANY(${except}::bigint[]))`.execute(trx);
      const ids = rows[0]!.ids === null ? [] : rows[0]!.ids.split(',');
      let companies = 0;
      for (let i = 0; i < ids.length; i += chunkSize) {
        const { rows: lines } = await sql<{ lines: string | null }>`
        SELECT string_agg(${INDEX_LINE}, chr(30)) AS lines FROM companies c
        WHERE c.id = ANY(string_to_array(${ids.slice(i, i + chunkSize).join(',')}, ',')::bigint[])`.execute(trx);
        const out: IndexRow[] = [];
        parseLines(lines[0]!.lines, (r) => out.push(r));
        companies += out.length;
        await onChunk(out);
      }
      return { changeIds: rows[0]!.change_ids === null ? [] : rows[0]!.change_ids.split(','), companies };
    });
}

/** The ids of the companies these runs wrote (for an index that reads its own columns). */
export async function readRunChangedCompanyIds(db: RegistryExecutor, runIds: readonly number[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const { rows } = await sql<{ ids: string | null }>`
    SELECT string_agg(DISTINCT x.id::text, ',') AS ids
    FROM daily_run_changes c CROSS JOIN LATERAL unnest(c.company_ids) AS x(id)
    WHERE c.run_id = ANY(${runIds.map(String)}::bigint[])`.execute(db);
  return rows[0]!.ids === null ? [] : rows[0]!.ids.split(',');
}
