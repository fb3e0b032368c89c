import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { FIELD_SEP, type NewCompanyRow } from './company-rows.ts';
import { TEXT_OID } from './pg-binary-array.ts';

/**
 * A first load's new companies and their identifiers written with `COPY … FROM STDIN (FORMAT
 * binary)` instead of INSERT … SELECT FROM unnest (companies-repo.ts insertCompanies,
 * insertIdentifiers): PostgreSQL then neither splits the rows' fields (string_to_array), nor
 * casts them, nor plans a statement; it reads each column in its binary form (docs/registry.md,
 * "The load"). The encoder is written here, not taken from npm: pg-copy-streams-binary (the one
 * package that encodes rows) has no `date`, builds a Buffer per field and pulls in old
 * dependencies; this one transcodes the row as the INSERT path receives it (company-rows.ts: the
 * snapshot's JSON, then its fields joined with U+001F) into one Buffer a batch, copying the text
 * fields' UTF-8 bytes without decoding them, so the rows stored are exactly the INSERT path's.
 */

/** The columns of `companies` a COPY row holds, in this order (companyCopyData). */
export const COMPANY_COPY_COLUMNS = [
  'id',
  'source_fingerprints',
  'first_seen_date',
  'snapshot',
  'primary_identifier_type',
  'primary_identifier',
  'name',
  'status',
  'content_hash',
  'name_folded',
  'city_folded',
  'voivodeship_folded',
  'postal_code',
  'legal_form',
  'activity_codes',
  'main_activity',
  'activity_start',
  'has_phone',
  'has_email',
  'has_fax',
] as const;

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const FIELD_BYTE = 0x1f;
const NULL_BYTE = 0x1d;
const COMMA = 0x2c;
/** Fields up to this many bytes are copied in a loop (CopyWriter.bytesField). */
const SHORT_COPY = 48;
const JSONB_VERSION = 1;
/** Days from 1970-01-01 to 2000-01-01, PostgreSQL's date epoch. */
const PG_EPOCH_DAYS = 10_957;
const DAY_MS = 86_400_000;

/** The number of companyRowFields' fields, and where each column is among them. */
const ROW_FIELDS = 17;
const F = {
  pit: 0,
  pi: 1,
  name: 2,
  status: 3,
  hash: 4,
  fp: 5,
  nameFolded: 6,
  city: 7,
  voiv: 8,
  postal: 9,
  legal: 10,
  codes: 11,
  main: 12,
  start: 13,
  phone: 14,
  email: 15,
  fax: 16,
} as const;

/** A `date` in PostgreSQL's binary form: days since 2000-01-01. Throws where PostgreSQL's `::date` would. */
export function pgDateDays(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (m === null) throw new Error(`invalid input syntax for type date: "${text}"`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // setUTCFullYear, unlike Date.UTC, takes years below 100 as they are; both roll 2021-02-30 over into March.
  const back = new Date(0);
  back.setUTCFullYear(y, mo - 1, d);
  if (y < 1 || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d)
    throw new Error(`date/time field value out of range: "${text}"`);
  return Math.round(back.getTime() / DAY_MS) - PG_EPOCH_DAYS;
}

/** A growing output buffer of COPY binary data. */
class CopyWriter {
  buf: Buffer;
  at = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(size, 64));
  }
  ensure(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.at + n, this.buf.length * 2));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
  int16(v: number): void {
    this.ensure(2);
    this.at = this.buf.writeInt16BE(v, this.at);
  }
  int32(v: number): void {
    this.ensure(4);
    this.at = this.buf.writeInt32BE(v, this.at);
  }
  /** A bigint given as its decimal text. */
  int8Field(decimal: string): void {
    this.ensure(12);
    this.at = this.buf.writeInt32BE(8, this.at);
    // Ids and identifier keys are positive and far below 2^53: two 32-bit halves of a number
    // cost a fraction of a BigInt's parse.
    if (decimal.length <= 15 && decimal.charCodeAt(0) !== 45 /* - */) {
      const n = Number(decimal);
      const high = Math.floor(n / 0x1_0000_0000);
      this.at = this.buf.writeUInt32BE(high, this.at);
      this.at = this.buf.writeUInt32BE(n - high * 0x1_0000_0000, this.at);
    } else this.at = this.buf.writeBigInt64BE(BigInt(decimal), this.at);
  }
  nullField(): void {
    this.int32(-1);
  }
  /** A field whose value is `source[start, end)` as it is (text in UTF-8, or any binary value). */
  bytesField(source: Buffer, start: number, end: number): void {
    this.ensure(4 + end - start);
    this.at = this.buf.writeInt32BE(end - start, this.at);
    if (end - start > SHORT_COPY) this.at += source.copy(this.buf, this.at, start, end);
    else {
      // A short field byte by byte: cheaper than a call into Buffer.copy.
      const buf = this.buf;
      let at = this.at;
      for (let i = start; i < end; i++) buf[at++] = source[i]!;
      this.at = at;
    }
  }
  /** A text field encoded as UTF-8 in place, after `prefix` (the jsonb version byte, say). */
  textField(text: string, prefix?: number): void {
    const max = Buffer.byteLength(text) + (prefix === undefined ? 0 : 1);
    this.ensure(4 + max);
    const lengthAt = this.at;
    this.at += 4;
    if (prefix !== undefined) this.buf[this.at++] = prefix;
    this.at += this.buf.write(text, this.at);
    this.buf.writeInt32BE(this.at - lengthAt - 4, lengthAt);
  }
  dateField(days: number): void {
    this.ensure(8);
    this.at = this.buf.writeInt32BE(4, this.at);
    this.at = this.buf.writeInt32BE(days, this.at);
  }
  boolField(value: boolean): void {
    this.ensure(5);
    this.at = this.buf.writeInt32BE(1, this.at);
    this.buf[this.at++] = value ? 1 : 0;
  }
  header(): void {
    this.ensure(SIGNATURE.length + 8);
    this.at += SIGNATURE.copy(this.buf, this.at);
    this.int32(0); // flags: no OIDs
    this.int32(0); // header extension length
  }
  done(): Buffer {
    this.int16(-1);
    return this.buf.subarray(0, this.at);
  }
}

/** The row's snapshot and its fields as bytes: the worker's row as it is, a row built on this thread encoded. */
function rowParts(row: NewCompanyRow['row']): { snapshot: Buffer; snapshotEnd: number; fields: Buffer; fieldsStart: number } {
  if (Buffer.isBuffer(row)) {
    // JSON text holds no raw U+001F: the first one ends the snapshot.
    const cut = row.indexOf(FIELD_BYTE);
    if (cut < 0) throw new Error('a company row without fields');
    return { snapshot: row, snapshotEnd: cut, fields: row, fieldsStart: cut + 1 };
  }
  const snapshot = typeof row.snapshot === 'string' ? Buffer.from(row.snapshot, 'utf8') : row.snapshot;
  const fields = typeof row.fields === 'string' ? Buffer.from(row.fields, 'utf8') : row.fields;
  return { snapshot, snapshotEnd: snapshot.length, fields, fieldsStart: 0 };
}

/**
 * The COPY binary data of new companies (columns COMPANY_COPY_COLUMNS), all first seen on
 * `firstSeenDate` and delivered by `source`: the same values insertCompanies stores from the
 * same rows. A field of a single U+001D is NULL, as string_to_array(…, chr(31), chr(29)) reads it.
 */
export function companyCopyData(source: string, firstSeenDate: string, rows: readonly NewCompanyRow[]): Buffer {
  const firstSeen = pgDateDays(firstSeenDate);
  let estimate = 32;
  for (const { row } of rows) estimate += 200 + (Buffer.isBuffer(row) ? row.length : 3 * (row.snapshot.length + row.fields.length));
  const out = new CopyWriter(estimate);
  out.header();
  // Field boundaries of the row being written, reused: [start, end) of each of its fields.
  const starts = new Int32Array(ROW_FIELDS);
  const ends = new Int32Array(ROW_FIELDS);
  const fingerprintsPrefix = `{${JSON.stringify(source)}:`;
  // Activity start dates repeat across a batch: each parsed once.
  const days = new Map<string, number>();
  for (const { id, row } of rows) {
    const { snapshot, snapshotEnd, fields, fieldsStart } = rowParts(row);
    // The fields' boundaries, scanned here (a hundred-odd bytes): a call into Buffer.indexOf a
    // field cost more than the scan.
    let k = 0;
    starts[0] = fieldsStart;
    for (let i = fieldsStart; i < fields.length; i++) {
      if (fields[i] !== FIELD_BYTE) continue;
      // A row with more fields than these is not one (the INSERT path would misread it too).
      if (k === ROW_FIELDS - 1) throw new Error(`company ${id}: a row of more than ${ROW_FIELDS} fields`);
      ends[k++] = i;
      starts[k] = i + 1;
    }
    if (k !== ROW_FIELDS - 1) throw new Error(`company ${id}: a row of ${k + 1} fields, not ${ROW_FIELDS}`);
    ends[k] = fields.length;
    const cols = { out, fields, starts, ends, id };

    out.int16(COMPANY_COPY_COLUMNS.length);
    out.int8Field(id);
    // jsonb_build_object(source, fp): the fingerprint is base64, never NULL.
    if (isNull(cols, F.fp)) out.textField(`${fingerprintsPrefix}null}`, JSONB_VERSION);
    else out.textField(`${fingerprintsPrefix}${JSON.stringify(latin1(cols, F.fp))}}`, JSONB_VERSION);
    out.dateField(firstSeen);
    out.bytesField(snapshot, 0, snapshotEnd);
    text(cols, F.pit);
    text(cols, F.pi);
    text(cols, F.name);
    text(cols, F.status);
    // decode(f, 'base64')
    if (isNull(cols, F.hash)) out.nullField();
    else {
      const b64 = latin1(cols, F.hash);
      out.ensure(4 + b64.length);
      const lengthAt = out.at;
      const written = out.buf.write(b64, lengthAt + 4, 'base64');
      out.buf.writeInt32BE(written, lengthAt);
      out.at = lengthAt + 4 + written;
    }
    text(cols, F.nameFolded);
    text(cols, F.city);
    text(cols, F.voiv);
    text(cols, F.postal);
    text(cols, F.legal);
    // string_to_array(f, ','): '' is the empty array, and no element is NULL.
    if (isNull(cols, F.codes)) out.nullField();
    else textArrayField(out, fields, starts[F.codes]!, ends[F.codes]!);
    text(cols, F.main);
    if (isNull(cols, F.start)) out.nullField();
    else {
      const date = latin1(cols, F.start);
      let d = days.get(date);
      if (d === undefined) days.set(date, (d = pgDateDays(date)));
      out.dateField(d);
    }
    bool(cols, F.phone);
    bool(cols, F.email);
    bool(cols, F.fax);
  }
  return out.done();
}

/** One row's fields while it is encoded: `fields[starts[k], ends[k])` is field k. */
interface RowFields {
  out: CopyWriter;
  fields: Buffer;
  starts: Int32Array;
  ends: Int32Array;
  id: string;
}

function isNull(r: RowFields, k: number): boolean {
  return r.ends[k]! - r.starts[k]! === 1 && r.fields[r.starts[k]!] === NULL_BYTE;
}

function latin1(r: RowFields, k: number): string {
  return r.fields.toString('latin1', r.starts[k]!, r.ends[k]!);
}

/** A text column: its UTF-8 bytes as they are. */
function text(r: RowFields, k: number): void {
  if (isNull(r, k)) r.out.nullField();
  else r.out.bytesField(r.fields, r.starts[k]!, r.ends[k]!);
}

/** A boolean column from `t` or `f` (`::boolean`). */
function bool(r: RowFields, k: number): void {
  if (isNull(r, k)) return r.out.nullField();
  const length = r.ends[k]! - r.starts[k]!;
  const c = r.fields[r.starts[k]!];
  if (length !== 1 || (c !== 0x74 && c !== 0x66))
    throw new Error(`company ${r.id}: invalid input syntax for type boolean: "${latin1(r, k)}"`);
  r.out.boolField(c === 0x74);
}

/** A one-dimensional `text[]` of the comma-separated elements of `source[start, end)` (array_recv's format). */
function textArrayField(out: CopyWriter, source: Buffer, start: number, end: number): void {
  if (start === end) {
    // The empty array: no dimensions.
    out.int32(12);
    out.int32(0);
    out.int32(0);
    out.int32(TEXT_OID);
    return;
  }
  let count = 1;
  for (let i = start; i < end; i++) if (source[i] === COMMA) count++;
  const size = 20 + 4 * count + (end - start - (count - 1));
  out.int32(size);
  out.int32(1); // dimensions
  out.int32(0); // no NULLs
  out.int32(TEXT_OID);
  out.int32(count);
  out.int32(1); // lower bound
  let at = start;
  for (let k = 0; k < count; k++) {
    let stop = at;
    while (stop < end && source[stop] !== COMMA) stop++;
    out.bytesField(source, at, stop);
    at = stop + 1;
  }
}

/** The COPY binary data of `company_identifiers` rows (key, company_id), in the order given. */
export function identifierCopyData(rows: readonly { key: string; companyId: string }[]): Buffer {
  const out = new CopyWriter(SIGNATURE.length + 10 + rows.length * 26);
  out.header();
  for (const r of rows) {
    out.int16(2);
    out.int8Field(r.key);
    out.int8Field(r.companyId);
  }
  return out.done();
}

/**
 * Sends `data` (COPY binary data) with `COPY table (columns) FROM STDIN (FORMAT binary)` on
 * `client`, which must be the connection of the transaction the rows belong to
 * (src/db/pinned-connection.ts). Returns the number of rows PostgreSQL reports.
 */
export async function copyBinary(client: pg.ClientBase, table: string, columns: readonly string[], data: Buffer): Promise<number> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN (FORMAT binary)`));
  await new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    stream.on('finish', resolve);
    stream.end(data);
  });
  return stream.rowCount;
}

// The separator this encoder splits on is the one company-rows.ts joins with.
if (FIELD_SEP.charCodeAt(0) !== FIELD_BYTE) throw new Error('company-copy.ts: FIELD_SEP changed');
