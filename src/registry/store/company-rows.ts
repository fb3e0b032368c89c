import type { CompanyColumns } from './search-columns.ts';
import { binaryTextArray } from './pg-binary-array.ts';

/**
 * A company's row as a batch write sends it: its snapshot's JSON and its other fields joined into
 * one string (companyRowFields), and a batch of rows as binary `text[]` parameters (rowsParameter)
 * that SQL takes apart again (splitRows).
 */

/**
 * A company's row: the UTF-8 bytes of companyRow(canonical JSON, fields) as the file-preparing
 * worker builds them, or the canonical JSON (as text, or as the UTF-8 bytes it was hashed from,
 * which are then copied rather than encoded again) and the fields as text, apart.
 */
export type CompanyRowData = Buffer | { snapshot: string | Buffer; fields: string | Buffer };

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
export const FIELD_SEP = '\x1f';
const FIELD_BYTE = 0x1f;
export const NULL_FIELD = '\x1d';
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
  return (
    field(c.primary_identifier_type) +
    FIELD_SEP +
    field(c.primary_identifier) +
    FIELD_SEP +
    field(c.name) +
    FIELD_SEP +
    field(c.status) +
    FIELD_SEP +
    hashBase64 +
    FIELD_SEP +
    fingerprint +
    FIELD_SEP +
    field(c.name_folded) +
    FIELD_SEP +
    field(c.city_folded) +
    FIELD_SEP +
    field(c.voivodeship_folded) +
    FIELD_SEP +
    field(c.postal_code) +
    FIELD_SEP +
    field(c.legal_form) +
    FIELD_SEP +
    field(c.activity_codes.join(',')) +
    FIELD_SEP +
    field(c.main_activity) +
    FIELD_SEP +
    field(c.activity_start) +
    FIELD_SEP +
    flag(c.has_phone) +
    FIELD_SEP +
    flag(c.has_email) +
    FIELD_SEP +
    flag(c.has_fax)
  );
}

/** Where the status is among companyRowFields' fields: the fourth. */
const STATUS_FIELD = 3;

/** The status column (CompanyStatus) of companyRowFields, as its text or as UTF-8 bytes. */
export function statusOfRowFields(fields: Buffer | string): string {
  if (typeof fields === 'string') return fields.split(FIELD_SEP)[STATUS_FIELD]!;
  let start = 0;
  for (let k = 0; k < STATUS_FIELD; k++) start = fields.indexOf(FIELD_BYTE, start) + 1;
  const end = fields.indexOf(FIELD_BYTE, start);
  return fields.toString('latin1', start, end);
}

/** A company's whole row as the worker builds it (in UTF-8): its canonical JSON, then companyRowFields. */
export function companyRow(snapshotJson: string, fields: string): string {
  return snapshotJson + FIELD_SEP + fields;
}

export interface RowsParameter {
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
 * had cost it about 3 µs a row more (docs/benchmarks.md). Rows the worker built
 * are copied once here, never decoded or encoded again.
 */
export function rowsParameter(rows: readonly { id: string; row: CompanyRowData; tail?: string }[]): RowsParameter {
  // Where each worker-built row's snapshot ends (-1 for a row given as text).
  const cuts: number[] = [];
  let snapshotBytes = 0;
  let fieldBytes = 0;
  let ids = '';
  for (let i = 0; i < rows.length; i++) {
    const { id, row, tail } = rows[i]!;
    if (tail !== undefined) fieldBytes += Buffer.byteLength(tail);
    if (Buffer.isBuffer(row)) {
      // JSON text holds no raw U+001F: the first one ends the snapshot.
      const cut = row.indexOf(FIELD_BYTE);
      if (cut < 0) throw new Error(`company ${id}: a row without fields`);
      cuts.push(cut);
      snapshotBytes += cut;
      fieldBytes += row.length - cut - 1;
    } else {
      cuts.push(-1);
      snapshotBytes += typeof row.snapshot === 'string' ? Buffer.byteLength(row.snapshot) : row.snapshot.length;
      fieldBytes += typeof row.fields === 'string' ? Buffer.byteLength(row.fields) : row.fields.length;
    }
    ids += i === 0 ? id : `,${id}`;
  }
  const snapshots = binaryTextArray(rows.length, snapshotBytes);
  const fields = binaryTextArray(rows.length, fieldBytes);
  for (let i = 0; i < rows.length; i++) {
    const { row, tail = '' } = rows[i]!;
    const cut = cuts[i]!;
    if (Buffer.isBuffer(row)) {
      snapshots.add(row, 0, cut);
      fields.addWithText(row, cut + 1, row.length, tail);
    } else {
      if (typeof row.snapshot === 'string') snapshots.addText(row.snapshot);
      else snapshots.add(row.snapshot, 0, row.snapshot.length);
      if (typeof row.fields === 'string') fields.addText(row.fields + tail);
      else fields.addWithText(row.fields, 0, row.fields.length, tail);
    }
  }
  return { snapshots: snapshots.done(), fields: fields.done(), ids };
}
