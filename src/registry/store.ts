import { hash as oneShotHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { CompanySnapshot, CompanyStatus, DetectedEvent, Identifier, IdentifierType, Profile } from './model.ts';
import type { DailyRunStatus, RegistryTables } from './tables.ts';
import { foldText, normalizeActivityCode, normalizePostalCode } from '../lib/text.ts';
import { identifierKey, storedIdentifierKey } from '../lib/identifiers.ts';
import { deriveStatus, primaryIdentifier } from './merge.ts';
import { legalFormSlugForLabel } from './dictionaries.ts';

/**
 * Data access of the registry: companies, their identifiers, events and daily runs. Functions take
 * `db` or a transaction first. Batch writes pass parallel arrays to `unnest`, so a batch of any
 * size is one statement and one round trip per table.
 */

/** Accepts the app's Kysely (any schema) or a transaction of it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RegistryExecutor = Kysely<any>;

export function registryDb(db: RegistryExecutor): Kysely<RegistryTables> {
  return db as unknown as Kysely<RegistryTables>;
}

/**
 * Every transaction that inserts events takes this transaction-level advisory lock first, so at
 * most one event-writing transaction is open at a time and event ids become visible in id order
 * (a feed polling `id > after_id` never skips an id that commits late).
 */
export const EVENTS_WRITER_LOCK = 7_307_900_001;

/** Class id of the session-level lock that keeps two processes off the same (date, source) run. */
export const RUN_LOCK_CLASS = 73_079;

export async function lockEventsWriter(trx: RegistryExecutor): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${EVENTS_WRITER_LOCK}::bigint)`.execute(trx);
}

// ------------------------------------------------------------------------------------------------
// Hashing and derived columns (pure)

/** 16 bytes of SHA-256: collisions are out of reach, and it halves the stored size. */
export function contentHash(json: string | Uint8Array): Buffer {
  return oneShotHash('sha256', json, 'buffer').subarray(0, 16);
}

export interface CompanyColumns {
  primary_identifier_type: IdentifierType;
  primary_identifier: string;
  name: string;
  status: CompanyStatus;
  name_folded: string;
  city_folded: string | null;
  voivodeship_folded: string | null;
  postal_code: string | null;
  legal_form: string | null;
  activity_codes: string[];
  main_activity: string | null;
  activity_start: string | null;
  has_phone: boolean;
  has_email: boolean;
  has_fax: boolean;
}

/** Which registry speaks first for display fields: the most authoritative for companies first. */
const DISPLAY_ORDER = ['krs', 'ceidg', 'bir', 'vat', 'file', 'synthetic'];

function byDisplayOrder(profiles: readonly Profile[]): readonly Profile[] {
  if (profiles.length <= 1) return profiles;
  const rank = (p: Profile) => {
    const i = DISPLAY_ORDER.indexOf(p.source);
    return i < 0 ? DISPLAY_ORDER.length : i;
  };
  return [...profiles].sort((a, b) => rank(a) - rank(b));
}

/** The first profile's value that is a non-blank string, trimmed (a loop: this runs for every company written). */
function firstNonEmpty(profiles: readonly Profile[], pick: (p: Profile) => string | null | undefined): string | null {
  for (let i = 0; i < profiles.length; i++) {
    const v = pick(profiles[i]!);
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return null;
}

const pickName = (p: Profile) => p.name;
const pickLegalForm = (p: Profile) => p.legal_form;
const pickActivityStart = (p: Profile) => p.dates?.find((d) => d.type === 'activity_start')?.date;
const pickRegistration = (p: Profile) => p.dates?.find((d) => d.type === 'registration')?.date;

/**
 * Cities, voivodeships and legal forms repeat across millions of companies: their folded forms
 * are remembered (bounded, so a stream of unusual values cannot grow it without limit).
 */
function memoize<T>(fn: (s: string) => T, limit = 20_000): (s: string) => T {
  let cache = new Map<string, T>();
  return (s) => {
    let v = cache.get(s);
    if (v === undefined && !cache.has(s)) {
      v = fn(s);
      if (cache.size >= limit) cache = new Map();
      cache.set(s, v);
    }
    return v as T;
  };
}

const foldPlace = memoize((s: string) => foldText(s) || null);
const slugOfLegalLabel = memoize(legalFormSlugForLabel);

/** The denormalised search columns of a (merged, canonical) snapshot. */
export function deriveCompanyColumns(snapshot: CompanySnapshot, slugOfLegalForm: (label: string) => string | null = slugOfLegalLabel): CompanyColumns {
  const primary = primaryIdentifier(snapshot);
  const profiles = byDisplayOrder(snapshot.profiles);
  const name = firstNonEmpty(profiles, pickName) ?? primary.value;
  const addressed = profiles.find((p) => p.address && (p.address.city || p.address.postal_code));
  const address = addressed?.address ?? null;
  const legalLabel = firstNonEmpty(profiles, pickLegalForm);

  // A handful of codes: an array beats a Set.
  const codes: string[] = [];
  let mainActivity: string | null = null;
  let hasPhone = false;
  let hasEmail = false;
  let hasFax = false;
  for (const p of profiles) {
    for (const a of p.activities ?? []) {
      if (!a.code) continue;
      const code = normalizeActivityCode(a.code);
      if (!codes.includes(code)) codes.push(code);
      if (a.is_primary && mainActivity === null) mainActivity = code;
    }
    for (const c of p.contacts ?? []) {
      if (!c.value) continue;
      if (c.type === 'phone') hasPhone = true;
      else if (c.type === 'email') hasEmail = true;
      else if (c.type === 'fax') hasFax = true;
    }
  }
  const activityStart = firstNonEmpty(profiles, pickActivityStart) ?? firstNonEmpty(profiles, pickRegistration);

  return {
    primary_identifier_type: primary.type,
    primary_identifier: primary.value,
    name,
    status: deriveStatus(snapshot),
    name_folded: foldText(name),
    city_folded: address?.city ? foldPlace(address.city) : null,
    voivodeship_folded: address?.voivodeship ? foldPlace(address.voivodeship) : null,
    postal_code: address?.postal_code ? normalizePostalCode(address.postal_code) || null : null,
    legal_form: legalLabel === null ? null : slugOfLegalForm(legalLabel),
    activity_codes: codes.sort(),
    main_activity: mainActivity,
    activity_start: activityStart !== null && /^\d{4}-\d{2}-\d{2}$/.test(activityStart) ? activityStart : null,
    has_phone: hasPhone,
    has_email: hasEmail,
    has_fax: hasFax,
  };
}

// ------------------------------------------------------------------------------------------------
// Reading companies

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

/** The company any of whose identifiers is this one (values as stored: NIP bare, KRS padded). */
export async function findCompanyByIdentifier(db: RegistryExecutor, identifier: Identifier): Promise<StoredCompany | null> {
  const key = identifierKey(identifier.type, identifier.value);
  if (key === null) return null;
  const { rows } = await sql<StoredCompany>`
    SELECT c.id, c.primary_identifier_type, c.primary_identifier, c.name, c.status, c.snapshot::json AS snapshot,
           c.first_seen_date::text AS first_seen_date, c.last_changed_date::text AS last_changed_date, c.updated_at
    FROM company_identifiers ci JOIN companies c ON c.id = ci.company_id
    WHERE ci.key = ${key}::bigint`.execute(db);
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
 * One query for a whole batch: each item's company (matched by any identifier; when identifiers
 * point at different companies, NIP wins, then KRS, then REGON9) with its stored state. The stored
 * snapshot travels only for items whose fingerprint differs from the source's last delivery.
 */
export async function lookupCompaniesForBatch(db: RegistryExecutor, source: string, items: readonly BatchLookupItem[]): Promise<(MatchedCompany | null)[]> {
  const first = (item: BatchLookupItem, type: IdentifierType) => {
    const id = item.identifiers.find((x) => x.type === type);
    return id === undefined ? null : identifierKey(type, id.value);
  };
  const out: (MatchedCompany | null)[] = items.map(() => null);
  if (items.length === 0) return out;
  // COALESCE stops at the first identifier found, so a known company costs one index probe
  // (NIP first, then KRS, then REGON9: the order in which two of them naming different
  // companies is settled); only a new one costs a probe per identifier.
  const { rows } = await sql<{
    idx: number; id: string; revision: number; content_hash: string; status: CompanyStatus;
    first_seen_date: string; last_changed_date: string | null; same_fingerprint: boolean;
    snapshot: string | null;
  }>`
    -- MATERIALIZED: inlined, the COALESCE was evaluated again inside the lateral probe below.
    WITH matched AS MATERIALIZED (
      SELECT i.idx, i.fp, COALESCE(
        (SELECT x.company_id FROM company_identifiers x WHERE x.key = i.nip),
        (SELECT x.company_id FROM company_identifiers x WHERE x.key = i.krs),
        (SELECT x.company_id FROM company_identifiers x WHERE x.key = i.regon)
      ) AS company_id
      FROM unnest(${column(items.map((_, i) => i), 'int')}, ${column(items.map((it) => first(it, 'NIP')), 'bigint')},
        ${column(items.map((it) => first(it, 'KRS')), 'bigint')}, ${column(items.map((it) => first(it, 'REGON9')), 'bigint')},
        ${column(items.map((it) => it.fingerprint), 'text')}) AS i(idx, nip, krs, regon, fp)
    )
    SELECT m.idx, c.*
    FROM matched m
    -- A primary-key probe per match, whatever the statistics say: while a first load grows the
    -- table faster than autovacuum analyses it, a plain join was planned as a hash join over a
    -- sequential scan of companies, once per batch (quadratic in the load's size).
    CROSS JOIN LATERAL (
      SELECT c.id, c.revision, encode(c.content_hash, 'base64') AS content_hash, c.status,
             c.first_seen_date::text AS first_seen_date, c.last_changed_date::text AS last_changed_date,
             coalesce(c.source_fingerprints ->> ${source} = m.fp, false) AS same_fingerprint,
             CASE WHEN (c.source_fingerprints ->> ${source}) IS DISTINCT FROM m.fp THEN c.snapshot END AS snapshot
      FROM companies c WHERE c.id = m.company_id LIMIT 1
    ) c
    WHERE m.company_id IS NOT NULL`.execute(db);
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

/** Ids for new companies, taken before the write transaction so it stays short. */
export async function allocateCompanyIds(db: RegistryExecutor, count: number): Promise<string[]> {
  if (count === 0) return [];
  // One row back rather than `count`: parsing 2,000 result rows cost this thread more than the ids.
  const { rows } = await sql<{ ids: string }>`SELECT array_to_string(array_agg(nextval('companies_id_seq')), ',') AS ids FROM generate_series(1, ${count}::int)`.execute(db);
  return rows[0]!.ids.split(',');
}

// ------------------------------------------------------------------------------------------------
// Writing companies

/**
 * A company's row: the UTF-8 bytes of companyRow(canonical JSON, fields) as the file-preparing
 * worker builds them, or the canonical JSON and the fields as text, apart.
 */
export type CompanyRowData = Buffer | { snapshot: string; fields: string };

/** A new company: its id and its row (companyRowFields for its fields). */
export interface NewCompanyRow {
  id: string;
  row: CompanyRowData;
}

/*
 * A row's fields are joined with U+001F, U+001D standing for NULL (companyRowFields). The
 * file-preparing worker builds a new company's whole row as UTF-8 bytes, its snapshot's canonical
 * JSON, U+001F and its fields (companyRow), which this thread passes on without decoding them;
 * the main thread keeps the two apart. JSON text never holds a raw control character; in the
 * other text fields a control character (which no registry means) is sent as a space, so no value
 * can contain a separator (PostgreSQL text cannot hold U+0000 either).
 *
 * A batch's rows travel as two `text[]` parameters in PostgreSQL's binary array format, the
 * snapshots in one and the rows' other fields in the other (rowsParameter), and PostgreSQL splits
 * only the short fields (string_to_array). The ids travel beside them, in a parameter of their own.
 */
const FIELD_SEP = '\x1f';
const FIELD_BYTE = 0x1f;
const NULL_FIELD = '\x1d';
const CONTROL_CHARS = /[\x00-\x1f]/g;
const HAS_CONTROL_CHAR = /[\x00-\x1f]/;

function field(value: string | null): string {
  if (value === null) return NULL_FIELD;
  return HAS_CONTROL_CHAR.test(value) ? value.replace(CONTROL_CHARS, ' ') : value;
}

const flag = (b: boolean) => (b ? 't' : 'f');

/**
 * The fields of a company row after its snapshot (companyRow), in the order insertCompanies and
 * updateCompanies read them: search columns, content hash and the source's fingerprint.
 */
export function companyRowFields(c: CompanyColumns, hashBase64: string, fingerprint: string): string {
  return field(c.primary_identifier_type) + FIELD_SEP + field(c.primary_identifier) + FIELD_SEP + field(c.name) + FIELD_SEP
    + field(c.status) + FIELD_SEP + hashBase64 + FIELD_SEP + fingerprint + FIELD_SEP + field(c.name_folded) + FIELD_SEP
    + field(c.city_folded) + FIELD_SEP + field(c.voivodeship_folded) + FIELD_SEP + field(c.postal_code) + FIELD_SEP
    + field(c.legal_form) + FIELD_SEP + field(c.activity_codes.join(',')) + FIELD_SEP + field(c.main_activity) + FIELD_SEP
    + field(c.activity_start) + FIELD_SEP + flag(c.has_phone) + FIELD_SEP + flag(c.has_email) + FIELD_SEP + flag(c.has_fax);
}

/** A company's whole row as the worker builds it (in UTF-8): its canonical JSON, then companyRowFields. */
export function companyRow(snapshotJson: string, fields: string): string {
  return snapshotJson + FIELD_SEP + fields;
}

/**
 * The FROM clause that takes a rowsParameter back apart into rows `u`: the id, the snapshot,
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

interface RowsParameter {
  /** The rows' snapshots, a `text[]` in PostgreSQL's binary format. */
  snapshots: Buffer;
  /** The rows' other fields (after the snapshot's U+001F), likewise. */
  fields: Buffer;
  ids: string;
}

/**
 * A batch's rows as two `text[]` parameters in PostgreSQL's binary array format (pg sends a Buffer
 * in binary, and the `::text[]` cast makes PostgreSQL read it with array_recv), and their ids.
 * Each element is its length and its UTF-8 bytes, so PostgreSQL copies the snapshots without
 * scanning them for a separator: splitting one text parameter at U+001E and each row at U+001F
 * had cost it about 3 µs a row more (docs/benchmarks.md, "Eighth pass"). Rows the worker built
 * are copied once here, never decoded or encoded again.
 */
function rowsParameter(rows: readonly { id: string; row: CompanyRowData }[]): RowsParameter {
  // Where each worker-built row's snapshot ends (-1 for a row given as text).
  const cuts: number[] = [];
  let snapshotBytes = 0;
  let fieldBytes = 0;
  let ids = '';
  for (let i = 0; i < rows.length; i++) {
    const { id, row } = rows[i]!;
    if (Buffer.isBuffer(row)) {
      // JSON text holds no raw U+001F: the first one ends the snapshot.
      const cut = row.indexOf(FIELD_BYTE);
      if (cut < 0) throw new Error(`company ${id}: a row without fields`);
      cuts.push(cut);
      snapshotBytes += cut;
      fieldBytes += row.length - cut - 1;
    } else {
      cuts.push(-1);
      snapshotBytes += Buffer.byteLength(row.snapshot);
      fieldBytes += Buffer.byteLength(row.fields);
    }
    ids += i === 0 ? id : `,${id}`;
  }
  const snapshots = binaryTextArray(rows.length, snapshotBytes);
  const fields = binaryTextArray(rows.length, fieldBytes);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!.row;
    const cut = cuts[i]!;
    if (Buffer.isBuffer(row)) {
      snapshots.add(row, 0, cut);
      fields.add(row, cut + 1, row.length);
    } else {
      snapshots.addText(row.snapshot);
      fields.addText(row.fields);
    }
  }
  return { snapshots: snapshots.done(), fields: fields.done(), ids };
}

/** TEXTOID: the element type a binary `text[]` names in its header. */
const TEXT_OID = 25;

/**
 * A one-dimensional `text[]` without NULLs in PostgreSQL's binary format (array_recv): the number
 * of dimensions, a has-NULLs flag, the element type, the dimension's length and lower bound, then
 * each element as its byte length and its bytes. `count` elements of `payload` bytes in all.
 */
function binaryTextArray(count: number, payload: number) {
  const out = Buffer.allocUnsafe(20 + count * 4 + payload);
  out.writeInt32BE(1, 0);
  out.writeInt32BE(0, 4);
  out.writeInt32BE(TEXT_OID, 8);
  out.writeInt32BE(count, 12);
  out.writeInt32BE(1, 16);
  let at = 20;
  return {
    add(source: Buffer, start: number, end: number): void {
      at = out.writeInt32BE(end - start, at);
      at += source.copy(out, at, start, end);
    },
    /** A string element, encoded as UTF-8 in place. */
    addText(text: string): void {
      const written = out.write(text, at + 4);
      out.writeInt32BE(written, at);
      at += 4 + written;
    },
    done(): Buffer {
      if (at !== out.length) throw new Error('binaryTextArray: the elements do not fill the array');
      return out;
    },
  };
}

const SEPARATOR_CHARS = /[\x1e\x1f]/;

/**
 * A column of a batch as one text parameter split in SQL (U+001E between values, U+001F for
 * NULL, a leading separator so that a single empty string survives): pg's array literals escape
 * every element with two regular expressions, a measurable share of the load's CPU. A value that
 * itself contains a separator falls back to the ordinary array parameter.
 */
function column(values: readonly (string | number | boolean | null)[], type: 'text' | 'bigint' | 'int' | 'date' | 'boolean') {
  let text = '';
  for (const v of values) {
    if (v === null || v === undefined) {
      text += '\x1e\x1f';
      continue;
    }
    const s = typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
    if (SEPARATOR_CHARS.test(s)) return sql`${values}::${sql.raw(type)}[]`;
    text += '\x1e' + s;
  }
  return sql`(string_to_array(${text}, chr(30), chr(31)))[2:]::${sql.raw(type)}[]`;
}

/** Inserts new companies, all first seen on `firstSeenDate`, and counts them in company_counts. */
export async function insertCompanies(trx: RegistryExecutor, source: string, firstSeenDate: string, rows: readonly NewCompanyRow[]): Promise<void> {
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

export interface CompanyUpdateRow {
  id: string;
  /** The revision read; the update applies only if nobody wrote the company since. */
  revision: number;
  snapshotJson: string;
  /** companyRowFields of the merged snapshot. */
  fields: string;
  /** Set when the update recorded events: the date of the run. */
  lastChangedDate: string | null;
}

/** Updates companies still at the revision read; returns the ids that were written. */
export async function updateCompanies(trx: RegistryExecutor, source: string, rows: readonly CompanyUpdateRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const lines = rowsParameter(rows.map((r) => ({ id: r.id, row: { snapshot: r.snapshotJson, fields: `${r.fields}${FIELD_SEP}${r.revision}${FIELD_SEP}${r.lastChangedDate ?? NULL_FIELD}` } })));
  const { rows: written } = await sql<{ id: string }>`
    UPDATE companies c SET
      primary_identifier_type = u.pit, primary_identifier = u.pi, name = u.name, status = u.status,
      snapshot = u.snapshot, content_hash = u.hash,
      source_fingerprints = c.source_fingerprints || jsonb_build_object(${source}::text, u.fp),
      revision = c.revision + 1,
      name_folded = u.name_folded, city_folded = u.city, voivodeship_folded = u.voiv, postal_code = u.postal,
      legal_form = u.legal, activity_codes = u.codes, main_activity = u.main,
      activity_start = u.start, has_phone = u.phone, has_email = u.email, has_fax = u.fax,
      last_changed_date = coalesce(u.changed, c.last_changed_date), updated_at = now()
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
export async function updateFingerprints(trx: RegistryExecutor, source: string, rows: readonly { id: string; fingerprint: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE companies c SET source_fingerprints = c.source_fingerprints || jsonb_build_object(${source}::text, u.fp)
    FROM unnest(${column(rows.map((r) => r.id), 'bigint')}, ${column(rows.map((r) => r.fingerprint), 'text')}) AS u(id, fp)
    WHERE c.id = u.id AND c.id = ANY(${column(rows.map((r) => r.id), 'bigint')})`.execute(trx);
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
export async function insertIdentifiers(trx: RegistryExecutor, rows: readonly IdentifierRow[]): Promise<IdentifierRow[]> {
  if (rows.length === 0) return [];
  const keys = rows.map((r) => storedIdentifierKey(r.type, r.value));
  const ids = rows.map((r) => r.companyId);
  await sql`SAVEPOINT identifiers`.execute(trx);
  try {
    await sql`
      INSERT INTO company_identifiers (key, company_id)
      SELECT * FROM unnest(${column(keys, 'bigint')}, ${column(ids, 'bigint')})`.execute(trx);
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

// ------------------------------------------------------------------------------------------------
// Events

export interface NewEventRow extends DetectedEvent {
  companyId: string;
}

/** Creates the monthly partition that holds `date` (and is a no-op when it exists). */
export async function ensureEventsPartition(db: RegistryExecutor, date: string): Promise<string> {
  const { rows } = await sql<{ part: string }>`SELECT ensure_events_partition(${date}::date) AS part`.execute(db);
  return rows[0]!.part;
}

/** Inserts events in the given order (so ids follow it). Call inside a transaction that holds EVENTS_WRITER_LOCK. */
export async function insertEvents(trx: RegistryExecutor, eventDate: string, runId: string | null, events: readonly NewEventRow[]): Promise<number> {
  if (events.length === 0) return 0;
  const result = await sql`
    INSERT INTO events (company_id, event_date, event_type, old_value, new_value, severity, run_id)
    SELECT u.company_id, ${eventDate}::date, u.event_type, u.old_value, u.new_value, u.severity, ${runId}::bigint
    FROM unnest(${column(events.map((e) => e.companyId), 'bigint')}, ${events.map((e) => e.event_type)}::event_type[],
      ${column(events.map((e) => e.old_value), 'text')}, ${column(events.map((e) => e.new_value), 'text')},
      ${events.map((e) => e.severity)}::event_severity[]) WITH ORDINALITY AS u(company_id, event_type, old_value, new_value, severity, n)
    ORDER BY u.n`.execute(trx);
  return Number(result.numAffectedRows ?? events.length);
}

export interface StoredEvent {
  id: string;
  company_id: string;
  event_type: string;
  old_value: string | null;
  new_value: string | null;
  event_date: string;
  severity: string;
  run_id: string | null;
}

/** A company's events, newest first (event_date, then id). */
export async function listCompanyEvents(db: RegistryExecutor, companyId: string, options: { limit?: number; offset?: number } = {}): Promise<StoredEvent[]> {
  const { rows } = await sql<StoredEvent>`
    SELECT id, company_id, event_type, old_value, new_value, event_date::text AS event_date, severity, run_id
    FROM events WHERE company_id = ${companyId}
    ORDER BY event_date DESC, id DESC
    LIMIT ${options.limit ?? 100} OFFSET ${options.offset ?? 0}`.execute(db);
  return rows;
}

// ------------------------------------------------------------------------------------------------
// Daily runs

export interface DailyRun {
  id: string;
  run_date: string;
  source: string;
  source_key: string;
  status: DailyRunStatus;
  new_count: number;
  updated_count: number;
  deleted_count: number;
  events_count: number;
  processed_count: number;
  skipped_count: number;
  total: number | null;
  attempts: number;
  started_at: Date;
  finished_at: Date | null;
  error: string | null;
}

const RUN_COLUMNS = sql`id, run_date::text AS run_date, source, source_key, status, new_count, updated_count, deleted_count,
  events_count::float8 AS events_count, processed_count::float8 AS processed_count, skipped_count, total::float8 AS total,
  attempts, started_at, finished_at, error`;

export async function findRun(db: RegistryExecutor, date: string, sourceKey: string): Promise<DailyRun | null> {
  const { rows } = await sql<DailyRun>`SELECT ${RUN_COLUMNS} FROM daily_runs WHERE run_date = ${date}::date AND source_key = ${sourceKey}`.execute(db);
  return rows[0] ?? null;
}

export async function findRunById(db: RegistryExecutor, id: string): Promise<DailyRun | null> {
  const { rows } = await sql<DailyRun>`SELECT ${RUN_COLUMNS} FROM daily_runs WHERE id = ${id}`.execute(db);
  return rows[0] ?? null;
}

/**
 * Opens the run of (date, source key): a new one, or the unfinished one again (its counters
 * cover the batches that committed). A completed run is returned as it is.
 */
export async function beginRun(db: RegistryExecutor, date: string, source: string, sourceKey: string): Promise<{ run: DailyRun; resumed: boolean }> {
  const { rows } = await sql<DailyRun & { inserted: boolean }>`
    INSERT INTO daily_runs (run_date, source, source_key, status)
    VALUES (${date}::date, ${source}, ${sourceKey}, 'running')
    ON CONFLICT (run_date, source_key) DO UPDATE SET
      status = CASE WHEN daily_runs.status = 'completed' THEN 'completed' ELSE 'running' END,
      attempts = daily_runs.attempts + CASE WHEN daily_runs.status = 'completed' THEN 0 ELSE 1 END,
      error = CASE WHEN daily_runs.status = 'completed' THEN daily_runs.error END,
      finished_at = CASE WHEN daily_runs.status = 'completed' THEN daily_runs.finished_at END
    RETURNING ${RUN_COLUMNS}, (xmax = 0) AS inserted`.execute(db);
  const { inserted, ...run } = rows[0]!;
  return { run, resumed: !inserted && run.status !== 'completed' };
}

export interface RunCounters {
  new: number;
  updated: number;
  deleted: number;
  events: number;
  processed: number;
  skipped: number;
}

export async function addRunCounters(trx: RegistryExecutor, runId: string, c: RunCounters): Promise<void> {
  await sql`
    UPDATE daily_runs SET new_count = new_count + ${c.new}, updated_count = updated_count + ${c.updated},
      deleted_count = deleted_count + ${c.deleted}, events_count = events_count + ${c.events},
      processed_count = processed_count + ${c.processed}, skipped_count = skipped_count + ${c.skipped}
    WHERE id = ${runId}`.execute(trx);
}

/** Marks the run completed with the number of companies known at the end of its day. */
export async function completeRun(db: RegistryExecutor, runId: string): Promise<DailyRun> {
  const { rows } = await sql<DailyRun>`
    UPDATE daily_runs r SET status = 'completed', finished_at = now(), error = NULL,
      total = (SELECT coalesce(sum(c.companies), 0) FROM company_counts c WHERE c.first_seen_date <= r.run_date)
    WHERE id = ${runId}
    RETURNING ${RUN_COLUMNS}`.execute(db);
  return rows[0]!;
}

export async function failRun(db: RegistryExecutor, runId: string, error: string): Promise<void> {
  await sql`UPDATE daily_runs SET status = 'failed', finished_at = now(), error = ${error.slice(0, 2000)} WHERE id = ${runId} AND status = 'running'`.execute(db);
}

/** Session-level lock so one process at a time works on a run; released with the connection. */
export async function tryLockRun(conn: RegistryExecutor, date: string, sourceKey: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${RUN_LOCK_CLASS}::int, hashtext(${`${date}|${sourceKey}`})) AS ok`.execute(conn);
  return rows[0]!.ok;
}

export async function unlockRun(conn: RegistryExecutor, date: string, sourceKey: string): Promise<void> {
  await sql`SELECT pg_advisory_unlock(${RUN_LOCK_CLASS}::int, hashtext(${`${date}|${sourceKey}`}))`.execute(conn);
}

export interface RunDayRow {
  run_date: string;
  sources: string[];
  new: number;
  updated: number;
  deleted: number;
  total: number;
}

/**
 * Completed runs summed per day, for `from`..`to` inclusive, oldest first. On-demand imports
 * (src/registry/import.ts, keys `import:…`) store through runs too, but a day that had only
 * those had no daily run.
 */
export async function completedRunDays(db: RegistryExecutor, from: string, to: string): Promise<RunDayRow[]> {
  const { rows } = await sql<RunDayRow>`
    SELECT run_date::text AS run_date, array_agg(DISTINCT source ORDER BY source) AS sources,
      sum(new_count)::float8 AS new, sum(updated_count)::float8 AS updated, sum(deleted_count)::float8 AS deleted,
      coalesce(max(total), 0)::float8 AS total
    FROM daily_runs
    WHERE status = 'completed' AND run_date BETWEEN ${from}::date AND ${to}::date AND source_key NOT LIKE 'import:%'
    GROUP BY run_date ORDER BY run_date`.execute(db);
  return rows;
}
