import { sql, type RawBuilder } from 'kysely';
import type { CompanyStatus, CompanySnapshot, Identifier, IdentifierType } from '../model.ts';
import { identifierKey, storedIdentifierKey } from '../../lib/identifiers.ts';
import type { RegistryExecutor } from './executor.ts';
import { column } from './batch-column.ts';
import { FIELD_SEP, NULL_FIELD, rowsParameter, type NewCompanyRow, type RowsParameter } from './company-rows.ts';
import { COMPANY_COPY_COLUMNS, companyCopyData, copyBinary, identifierCopyData } from './company-copy.ts';
import type pg from 'pg';

/**
 * Data access of companies and their identifiers. Functions take `db` or a transaction first.
 * Batch writes pass parallel arrays to `unnest`, so a batch of any size is one statement and one
 * round trip per table.
 */

export interface StoredCompany {
  id: string;
  primary_identifier_type: IdentifierType;
  primary_identifier: string;
  name: string;
  status: CompanyStatus;
  snapshot: CompanySnapshot;
  first_seen_date: string;
  last_changed_date: string | null;
  updated_at: Date;
}

/** A StoredCompany's columns of `companies c`. */
export const STORED_COMPANY_COLUMNS = sql`c.id, c.primary_identifier_type, c.primary_identifier, c.name, c.status, c.snapshot::json AS snapshot,
           c.first_seen_date::text AS first_seen_date, c.last_changed_date::text AS last_changed_date, c.updated_at`;

/** The SELECT of a StoredCompany by an identifier's key (lib/identifiers.ts identifierKey). */
export function companyByKeyQuery(key: string): RawBuilder<StoredCompany> {
  return sql<StoredCompany>`
    SELECT ${STORED_COMPANY_COLUMNS}
    FROM company_identifiers ci JOIN companies c ON c.id = ci.company_id
    WHERE ci.key = ${key}::bigint`;
}

/** The company any of whose identifiers is this one (values as stored: NIP bare, KRS padded). */
export async function findCompanyByIdentifier(db: RegistryExecutor, identifier: Identifier): Promise<StoredCompany | null> {
  const key = identifierKey(identifier.type, identifier.value);
  if (key === null) return null;
  const { rows } = await sql<StoredCompany>`${companyByKeyQuery(key)}`.execute(db);
  return rows[0] ?? null;
}

export async function findCompanyIdByIdentifier(db: RegistryExecutor, identifier: Identifier): Promise<string | null> {
  const key = identifierKey(identifier.type, identifier.value);
  if (key === null) return null;
  const { rows } = await sql<{ company_id: string }>`SELECT company_id FROM company_identifiers WHERE key = ${key}::bigint`.execute(db);
  return rows[0]?.company_id ?? null;
}

export async function countCompanies(db: RegistryExecutor): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM companies`.execute(db);
  return Number(rows[0]!.n);
}

/** The registry's size from the per-day counts: no scan of `companies`. */
export async function registrySize(db: RegistryExecutor): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT coalesce(sum(companies), 0) AS n FROM company_counts`.execute(db);
  return Number(rows[0]!.n);
}

export async function hasAnyCompany(db: RegistryExecutor): Promise<boolean> {
  const { rows } = await sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM companies) AS any`.execute(db);
  return rows[0]!.any;
}

/** One incoming snapshot of a batch: its identifiers and the fingerprint of what the source sent. */
export interface BatchLookupItem {
  identifiers: readonly Identifier[];
  fingerprint: string;
}

export interface MatchedCompany {
  id: string;
  revision: number;
  /** Base64, as fingerprints are: compared as text, without a Buffer per row. */
  contentHash: string;
  status: CompanyStatus;
  firstSeenDate: string;
  lastChangedDate: string | null;
  /** The source delivered exactly this before: nothing to do. */
  sameFingerprint: boolean;
  /**
   * The stored snapshot's JSON, loaded only when the fingerprint differs. Text, parsed by the
   * caller one company at a time: parsed by the driver, a batch's snapshots would all be alive
   * together until planned, and garbage collection was a quarter of detection's CPU.
   */
  snapshotJson: string | null;
}

/**
 * Two queries for a whole batch: each item's company (matched by any identifier; when identifiers
 * point at different companies, NIP wins, then KRS, then REGON9), then the matched companies'
 * stored state. The stored snapshot travels only for items whose fingerprint differs from the
 * source's last delivery.
 */
export async function lookupCompaniesForBatch(
  db: RegistryExecutor,
  source: string,
  items: readonly BatchLookupItem[],
): Promise<(MatchedCompany | null)[]> {
  const first = (item: BatchLookupItem, type: IdentifierType) => {
    const id = item.identifiers.find((x) => x.type === type);
    return id === undefined ? null : identifierKey(type, id.value);
  };
  const out: (MatchedCompany | null)[] = items.map(() => null);
  if (items.length === 0) return out;
  // COALESCE stops at the first identifier found, so a known company costs one index probe
  // (NIP first, then KRS, then REGON9: the order in which two of them naming different
  // companies is settled); only a new one costs a probe per identifier.
  const { rows: matched } = await sql<{ idx: number; company_id: string }>`
    -- MATERIALIZED: inlined, the filter below would evaluate the COALESCE (its probes) again.
    WITH matched AS MATERIALIZED (
      SELECT i.idx, COALESCE(
        (SELECT x.company_id FROM company_identifiers x WHERE x.key = i.nip),
        (SELECT x.company_id FROM company_identifiers x WHERE x.key = i.krs),
        (SELECT x.company_id FROM company_identifiers x WHERE x.key = i.regon)
      ) AS company_id
      FROM unnest(${column(
        items.map((_, i) => i),
        'int',
      )}, ${column(
        items.map((it) => first(it, 'NIP')),
        'bigint',
      )},
        ${column(
          items.map((it) => first(it, 'KRS')),
          'bigint',
        )}, ${column(
          items.map((it) => first(it, 'REGON9')),
          'bigint',
        )}) AS i(idx, nip, krs, regon)
    )
    SELECT idx, company_id FROM matched WHERE company_id IS NOT NULL`.execute(db);
  if (matched.length === 0) return out;
  const rows = await readMatchedCompanies(db, source, matched, items);
  for (const r of rows) {
    out[r.idx] = {
      id: r.id,
      revision: r.revision,
      contentHash: r.content_hash,
      status: r.status,
      firstSeenDate: r.first_seen_date,
      lastChangedDate: r.last_changed_date,
      sameFingerprint: r.same_fingerprint,
      snapshotJson: r.snapshot,
    };
  }
  return out;
}

interface StoredCompanyRow {
  idx: number;
  id: string;
  revision: number;
  content_hash: string;
  status: CompanyStatus;
  first_seen_date: string;
  last_changed_date: string | null;
  same_fingerprint: boolean;
  snapshot: string | null;
}

/**
 * The matched companies' rows, read by one bitmap heap scan over their ids rather than a
 * primary-key probe each: a probe reads its heap page only when it gets there, one read after
 * another, where the bitmap scan's read stream has PostgreSQL 18's asynchronous I/O read the
 * batch's pages ahead (`effective_io_concurrency` in flight). On a day whose pages are not in
 * memory that is most of the lookup: on this machine's disk a read takes about 0.4 ms alone and
 * several overlap (docs/benchmarks.md, "The 1 % day's reads"). The planner prefers the index
 * scan for ids loaded in order, so index scans are turned off for this statement's transaction;
 * inside a caller's transaction (where that would outlive the statement) the planner chooses.
 */
async function readMatchedCompanies(
  db: RegistryExecutor,
  source: string,
  matched: readonly { idx: number; company_id: string }[],
  items: readonly BatchLookupItem[],
): Promise<StoredCompanyRow[]> {
  const ids = column(
    matched.map((m) => m.company_id),
    'bigint',
  );
  const read = (trx: RegistryExecutor) =>
    sql<StoredCompanyRow>`
      SELECT w.idx, c.id, c.revision, encode(c.content_hash, 'base64') AS content_hash, c.status,
             c.first_seen_date::text AS first_seen_date, c.last_changed_date::text AS last_changed_date,
             coalesce(c.source_fp = w.fp, false) AS same_fingerprint,
             CASE WHEN c.source_fp IS DISTINCT FROM w.fp THEN c.snapshot END AS snapshot
      FROM unnest(${column(
        matched.map((m) => m.idx),
        'int',
      )}, ${ids}, ${column(
        matched.map((m) => items[m.idx]!.fingerprint),
        'text',
      )}) AS w(idx, company_id, fp)
      -- OFFSET 0 keeps the scan over all the ids one node (not a probe per row of w).
      JOIN (
        SELECT c.id, c.revision, c.content_hash, c.status, c.first_seen_date, c.last_changed_date,
               c.source_fingerprints ->> ${source} AS source_fp, c.snapshot
        FROM companies c WHERE c.id = ANY(${ids}) OFFSET 0
      ) c ON c.id = w.company_id`.execute(trx);
  if (db.isTransaction) return (await read(db)).rows;
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('enable_indexscan', 'off', true)`.execute(trx);
    return (await read(trx)).rows;
  });
}

/**
 * The FROM clause that takes a rowsParameter (company-rows.ts) back apart into rows `u`: the id, the snapshot,
 * companyRowFields from f[1], then `extra` (expressions over f) for fields appended after those.
 * string_to_array stands in FROM so that it runs once per row, not once per field.
 */
function splitRows(rows: RowsParameter, extra = sql``) {
  return sql`unnest(${rows.snapshots}::text[], ${rows.fields}::text[], string_to_array(${rows.ids}::text, ',')::bigint[]) AS r(snapshot, line, id)
    CROSS JOIN LATERAL string_to_array(r.line, chr(31), chr(29)) AS s(f)
    CROSS JOIN LATERAL (SELECT r.id, r.snapshot, ${ROW_COLUMNS}${extra}) u`;
}

const ROW_COLUMNS = sql`f[1] AS pit, f[2] AS pi, f[3] AS name, f[4] AS status, decode(f[5], 'base64') AS hash,
  f[6] AS fp, f[7] AS name_folded, f[8] AS city, f[9] AS voiv, f[10] AS postal, f[11] AS legal,
  string_to_array(f[12], ',') AS codes, f[13] AS main, f[14]::date AS start, f[15]::boolean AS phone, f[16]::boolean AS email,
  f[17]::boolean AS fax`;

/** Ids for new companies, taken before the write transaction so it stays short. */
export async function allocateCompanyIds(db: RegistryExecutor, count: number): Promise<string[]> {
  if (count === 0) return [];
  // One row back rather than `count`: parsing 2,000 result rows cost this thread more than the ids.
  const { rows } = await sql<{
    ids: string;
  }>`SELECT array_to_string(array_agg(nextval('companies_id_seq')), ',') AS ids FROM generate_series(1, ${count}::int)`.execute(db);
  return rows[0]!.ids.split(',');
}

/** Inserts new companies, all first seen on `firstSeenDate`, and counts them in company_counts. */
export async function insertCompanies(
  trx: RegistryExecutor,
  source: string,
  firstSeenDate: string,
  rows: readonly NewCompanyRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    WITH inserted AS (
      INSERT INTO companies (id, primary_identifier_type, primary_identifier, name, status, snapshot, content_hash,
        source_fingerprints, name_folded, city_folded, voivodeship_folded, postal_code, legal_form, activity_codes,
        main_activity, activity_start, has_phone, has_email, has_fax, first_seen_date)
      SELECT u.id, u.pit, u.pi, u.name, u.status, u.snapshot, u.hash, jsonb_build_object(${source}::text, u.fp), u.name_folded,
        u.city, u.voiv, u.postal, u.legal, u.codes, u.main, u.start, u.phone, u.email, u.fax, ${firstSeenDate}::date
      FROM ${splitRows(rowsParameter(rows))}
      RETURNING 1
    )
    INSERT INTO company_counts (first_seen_date, companies)
    SELECT ${firstSeenDate}::date, count(*) FROM inserted
    ON CONFLICT (first_seen_date) DO UPDATE SET companies = company_counts.companies + EXCLUDED.companies`.execute(trx);
}

/**
 * insertCompanies through `COPY … FROM STDIN (FORMAT binary)` (company-copy.ts) on `client`, the
 * connection of the transaction `trx` (src/db/pinned-connection.ts): the same rows stored, with
 * less of PostgreSQL's CPU a row. For a first load's batches.
 */
export async function copyCompanies(
  trx: RegistryExecutor,
  client: pg.ClientBase,
  source: string,
  firstSeenDate: string,
  rows: readonly NewCompanyRow[],
): Promise<void> {
  if (rows.length === 0) return;
  const copied = await copyBinary(client, 'companies', COMPANY_COPY_COLUMNS, companyCopyData(source, firstSeenDate, rows));
  await sql`
    INSERT INTO company_counts (first_seen_date, companies) VALUES (${firstSeenDate}::date, ${copied}::bigint)
    ON CONFLICT (first_seen_date) DO UPDATE SET companies = company_counts.companies + EXCLUDED.companies`.execute(trx);
}

export interface CompanyUpdateRow {
  id: string;
  /** The revision read; the update applies only if nobody wrote the company since. */
  revision: number;
  /** The merged snapshot's canonical JSON, or its UTF-8 bytes when they are at hand (prepare.ts jsonBytes). */
  snapshotJson: string | Buffer;
  /** companyRowFields of the merged snapshot (as UTF-8 bytes when the file-preparing worker built them). */
  fields: string | Buffer;
  /** Set when the update recorded events: the date of the run. */
  lastChangedDate: string | null;
}

/** Updates companies still at the revision read; returns the ids that were written. */
export async function updateCompanies(trx: RegistryExecutor, source: string, rows: readonly CompanyUpdateRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const lines = rowsParameter(
    rows.map((r) => ({
      id: r.id,
      row: { snapshot: r.snapshotJson, fields: r.fields },
      tail: `${FIELD_SEP}${r.revision}${FIELD_SEP}${r.lastChangedDate ?? NULL_FIELD}`,
    })),
  );
  const { rows: written } = await sql<{ id: string }>`
    UPDATE companies c SET
      primary_identifier_type = u.pit, primary_identifier = u.pi, name = u.name, status = u.status,
      snapshot = u.snapshot, content_hash = u.hash,
      source_fingerprints = c.source_fingerprints || jsonb_build_object(${source}::text, u.fp),
      revision = c.revision + 1,
      name_folded = u.name_folded, city_folded = u.city, voivodeship_folded = u.voiv, postal_code = u.postal,
      legal_form = u.legal, activity_codes = u.codes, main_activity = u.main,
      activity_start = u.start, has_phone = u.phone, has_email = u.email, has_fax = u.fax,
      -- Never backwards: a caught-up earlier day leaves a later change's date (the profile's last
      -- change; and the planner's once-a-day count of updated companies reads it).
      last_changed_date = GREATEST(u.changed, c.last_changed_date), updated_at = now()
    FROM ${splitRows(lines, sql`, f[18]::int AS revision, f[19]::date AS changed`)}
    -- The ANY() gives the planner an index path to companies whatever its statistics say.
    WHERE c.id = u.id AND c.revision = u.revision AND c.id = ANY(string_to_array(${lines.ids}::text, ',')::bigint[])
    RETURNING c.id`.execute(trx);
  return new Set(written.map((r) => r.id));
}

/**
 * Records that a source delivered something whose merge changed nothing: the next identical
 * delivery is then skipped without loading the snapshot. Losing this to a race costs only a
 * recomputation, so it needs no revision check.
 */
export async function updateFingerprints(
  trx: RegistryExecutor,
  source: string,
  rows: readonly { id: string; fingerprint: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE companies c SET source_fingerprints = c.source_fingerprints || jsonb_build_object(${source}::text, u.fp)
    FROM unnest(${column(
      rows.map((r) => r.id),
      'bigint',
    )}, ${column(
      rows.map((r) => r.fingerprint),
      'text',
    )}) AS u(id, fp)
    WHERE c.id = u.id AND c.id = ANY(${column(
      rows.map((r) => r.id),
      'bigint',
    )})`.execute(trx);
}

export interface IdentifierRow {
  companyId: string;
  type: IdentifierType;
  value: string;
}

/**
 * Adds identifiers; one already held by another company stays with it. Returns the rows that
 * were not inserted because another company holds them. The plain INSERT is tried first under a
 * savepoint (ON CONFLICT costs half as much again per row); a clash, which only a concurrent
 * writer causes, falls back to the row-by-row check.
 */
export async function insertIdentifiers(
  trx: RegistryExecutor,
  rows: readonly IdentifierRow[],
  /** The transaction's own client: the plain insert is then a binary COPY (copyCompanies). */
  copyClient?: pg.ClientBase,
): Promise<IdentifierRow[]> {
  if (rows.length === 0) return [];
  const keys = rows.map((r) => storedIdentifierKey(r.type, r.value));
  const ids = rows.map((r) => r.companyId);
  await sql`SAVEPOINT identifiers`.execute(trx);
  try {
    // In key order, the batch's entries reach the primary key's leaves in order rather than at
    // random: the statement took about a tenth less in a load (docs/benchmarks.md, reg-r8).
    if (copyClient !== undefined) {
      // Keys are below 2^53 (identifierKey), so numbers order them exactly; each converted once.
      const numeric = Float64Array.from(keys, Number);
      const order = Array.from(keys, (_, i) => i).sort((a, b) => numeric[a]! - numeric[b]!);
      await copyBinary(
        copyClient,
        'company_identifiers',
        ['key', 'company_id'],
        identifierCopyData(order.map((i) => ({ key: keys[i]!, companyId: ids[i]! }))),
      );
    } else
      await sql`
        INSERT INTO company_identifiers (key, company_id)
        SELECT * FROM unnest(${column(keys, 'bigint')}, ${column(ids, 'bigint')}) AS u(key, company_id) ORDER BY u.key`.execute(trx);
    await sql`RELEASE SAVEPOINT identifiers`.execute(trx);
    return [];
  } catch (e) {
    if ((e as { code?: string }).code !== '23505') throw e;
    await sql`ROLLBACK TO SAVEPOINT identifiers`.execute(trx);
  }
  const { rows: inserted } = await sql<{ key: string }>`
    INSERT INTO company_identifiers (key, company_id)
    SELECT * FROM unnest(${column(keys, 'bigint')}, ${column(ids, 'bigint')})
    ON CONFLICT (key) DO NOTHING
    RETURNING key`.execute(trx);
  const done = new Set(inserted.map((r) => r.key));
  return rows.filter((_, i) => !done.has(keys[i]!));
}

/** Only for companies inserted by the same transaction (a lost race): they have no events yet. */
export async function deleteCompanies(trx: RegistryExecutor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`DELETE FROM company_identifiers WHERE company_id = ANY(${column(ids, 'bigint')})`.execute(trx);
  await sql`
    WITH deleted AS (DELETE FROM companies WHERE id = ANY(${column(ids, 'bigint')}) RETURNING first_seen_date)
    UPDATE company_counts c SET companies = c.companies - d.n
    FROM (SELECT first_seen_date, count(*) AS n FROM deleted GROUP BY first_seen_date) d
    WHERE c.first_seen_date = d.first_seen_date`.execute(trx);
}
