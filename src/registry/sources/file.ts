import { createReadStream } from 'node:fs';
import {
  DATE_TYPES,
  IDENTIFIER_TYPES,
  type Activity,
  type Address,
  type CompanySnapshot,
  type Contact,
  type ContactType,
  type DatedEntry,
  type DateType,
  type Identifier,
  type IdentifierType,
  type LocalUnit,
  type Person,
  type Profile,
  type SourceName,
} from '../model.ts';
import { parseIdentifier } from '../../lib/identifiers.ts';
import { normalizeActivityCode } from '../../lib/text.ts';
import { pkdName } from '../dictionaries.ts';
import type { RegistrySource } from './source.ts';

/**
 * The `file:PATH` source: a snapshot NDJSON file, one company a line in the shape of
 * `CompanySnapshot` (DECISIONS section 1). Every day's run reads the whole file; a company that
 * is not in it is unchanged that day.
 *
 * The file is streamed line by line, so memory stays flat whatever its size. A line that cannot
 * be used (bad JSON, no identity, no valid identifier) is reported through `onError` and skipped;
 * it never stops the stream. Parts of a usable line that cannot be used (an invalid extra
 * identifier, a contact of unknown type, a malformed date) are dropped and reported through
 * `onWarning`.
 */

export interface FileSourceOptions {
  /** A line that was skipped. Line numbers start at 1. */
  onError?: (lineNumber: number, message: string) => void;
  /** A line that was used with something left out. */
  onWarning?: (lineNumber: number, message: string) => void;
}

const FILE_ORIGINS = new WeakMap<RegistrySource, { path: string; options: FileSourceOptions }>();

export function createFileSource(path: string, options: FileSourceOptions = {}): RegistrySource {
  const source: RegistrySource = {
    name: 'file',
    snapshotsForDate(_date: string, runOptions?: { signal?: AbortSignal }): AsyncIterable<CompanySnapshot> {
      return readSnapshotFile(path, options, runOptions?.signal);
    },
  };
  FILE_ORIGINS.set(source, { path, options });
  return source;
}

/**
 * The file and options behind a source made by createFileSource (null for any other source):
 * the daily run can then read the file in a worker thread instead of through the stream.
 */
export function fileSourceOrigin(source: RegistrySource): { path: string; options: FileSourceOptions } | null {
  return FILE_ORIGINS.get(source) ?? null;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The file's lines (LF or CRLF), decoded as UTF-8. Bytes are split at LF before decoding (in
 * UTF-8 that byte is never part of another character), which costs far less than `readline`'s
 * per-line events and regular expression on the decoded text.
 */
async function* readLines(path: string, signal: AbortSignal | undefined): AsyncGenerator<string> {
  const input = createReadStream(path, { signal });
  let rest: Buffer | null = null;
  const decode = (buf: Buffer, start: number, end: number) =>
    buf.toString('utf8', start, end > start && buf[end - 1] === CARRIAGE_RETURN ? end - 1 : end);
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let start = 0;
      let nl = chunk.indexOf(NEWLINE);
      if (rest !== null && nl >= 0) {
        const joined: Buffer = Buffer.concat([rest, chunk.subarray(0, nl)]);
        rest = null;
        yield decode(joined, 0, joined.length);
        start = nl + 1;
        nl = chunk.indexOf(NEWLINE, start);
      }
      for (; nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
        yield decode(chunk, start, nl);
        start = nl + 1;
      }
      if (start < chunk.length) rest = rest === null ? Buffer.from(chunk.subarray(start)) : Buffer.concat([rest, chunk.subarray(start)]);
    }
    if (rest !== null && rest.length > 0) yield decode(rest, 0, rest.length);
  } finally {
    input.destroy();
  }
}

async function* readSnapshotFile(path: string, options: FileSourceOptions, signal: AbortSignal | undefined): AsyncGenerator<CompanySnapshot> {
  signal?.throwIfAborted();
  let lineNumber = 0;
  for await (const line of readLines(path, signal)) {
    signal?.throwIfAborted();
    lineNumber++;
    const text = lineNumber === 1 ? line.replace(/^\uFEFF/, '') : line;
    if (text.trim() === '') continue;
    const result = parseSnapshotLine(text);
    if (!result.ok) {
      options.onError?.(lineNumber, result.error);
      continue;
    }
    for (const warning of result.warnings) options.onWarning?.(lineNumber, warning);
    yield result.snapshot;
  }
}

export type ParsedSnapshot =
  | { ok: true; snapshot: CompanySnapshot; warnings: string[] }
  | { ok: false; error: string };

/** One NDJSON line to a normalised snapshot, or the reason it cannot be used. */
export function parseSnapshotLine(line: string): ParsedSnapshot {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return { ok: false, error: `invalid JSON: ${(err as Error).message}` };
  }
  return normalizeSnapshot(raw);
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Strings as given (trimmed); numbers as their decimal text, since JSON writers often emit NIPs as numbers. */
function text(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

function optionalText(value: unknown): string | null {
  const t = text(value);
  return t === '' ? null : t;
}

const SOURCE_NAMES: ReadonlySet<string> = new Set<SourceName>(['krs', 'bir', 'ceidg', 'vat', 'synthetic', 'file']);
const DATE_TYPE_SET: ReadonlySet<string> = new Set<string>(DATE_TYPES);
const CONTACT_TYPES: ReadonlySet<string> = new Set<ContactType>(['phone', 'email', 'fax']);
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})/;

/**
 * Normalises a parsed line: defaults for what is missing (`[]`, `null` address, `file` as the
 * profile's source), identifiers in stored form (bare NIP, 10-digit KRS), PKD codes without dots.
 */
export function normalizeSnapshot(raw: unknown): ParsedSnapshot {
  if (!isObject(raw)) return { ok: false, error: 'a line must be a JSON object' };
  // A line copied from an API response still has its envelope; take the company out of it.
  const data = isObject(raw.data) && raw.identity === undefined ? raw.data : raw;
  if (!isObject(data.identity)) return { ok: false, error: 'missing identity' };
  if (!Array.isArray(data.identity.identifiers) || data.identity.identifiers.length === 0) {
    return { ok: false, error: 'missing identity.identifiers' };
  }

  const warnings: string[] = [];
  const identifiers = normalizeIdentifiers(data.identity.identifiers, warnings);
  if (identifiers.length === 0) return { ok: false, error: `no valid identifier (${warnings.join('; ')})` };

  if (data.profiles !== undefined && data.profiles !== null && !Array.isArray(data.profiles)) {
    return { ok: false, error: 'profiles must be an array' };
  }
  if (data.persons !== undefined && data.persons !== null && !Array.isArray(data.persons)) {
    return { ok: false, error: 'persons must be an array' };
  }

  const profiles: Profile[] = [];
  for (const [i, p] of ((data.profiles as unknown[] | null) ?? []).entries()) {
    if (!isObject(p)) {
      warnings.push(`profiles.${i}: not an object, ignored`);
      continue;
    }
    profiles.push(normalizeProfile(p, `profiles.${i}`, warnings));
  }

  return {
    ok: true,
    warnings,
    snapshot: {
      identity: {
        identifiers,
        company_type: text(data.identity.company_type),
        country_code: text(data.identity.country_code) || 'PL',
      },
      profiles,
      persons: normalizePersons((data.persons as unknown[] | null) ?? [], warnings),
    },
  };
}

function normalizeIdentifiers(list: unknown[], warnings: string[]): Identifier[] {
  const out: Identifier[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of list.entries()) {
    if (!isObject(entry)) {
      warnings.push(`identity.identifiers.${i}: not an object`);
      continue;
    }
    const type = text(entry.type).toUpperCase();
    if (!(IDENTIFIER_TYPES as readonly string[]).includes(type)) {
      warnings.push(`identity.identifiers.${i}: unknown type ${JSON.stringify(entry.type ?? null)}`);
      continue;
    }
    const parsed = parseIdentifier(type as IdentifierType, text(entry.value));
    if (!parsed.ok) {
      warnings.push(`identity.identifiers.${i}: ${parsed.error}`);
      continue;
    }
    const key = `${type}:${parsed.value}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ type: type as IdentifierType, value: parsed.value });
  }
  return out;
}

function normalizeProfile(p: Json, path: string, warnings: string[]): Profile {
  const source = text(p.source).toLowerCase();
  if (source !== '' && !SOURCE_NAMES.has(source)) warnings.push(`${path}.source: unknown source ${JSON.stringify(p.source)}, read as file`);
  return {
    source: SOURCE_NAMES.has(source) ? (source as SourceName) : 'file',
    name: text(p.name),
    status: text(p.status),
    legal_form: text(p.legal_form),
    address: normalizeAddress(p.address),
    units: normalizeUnits(arrayOf(p.units, `${path}.units`, warnings), `${path}.units`, warnings),
    contacts: normalizeContacts(arrayOf(p.contacts, `${path}.contacts`, warnings), `${path}.contacts`, warnings),
    activities: normalizeActivities(arrayOf(p.activities, `${path}.activities`, warnings), `${path}.activities`, warnings),
    dates: normalizeDates(arrayOf(p.dates, `${path}.dates`, warnings), `${path}.dates`, warnings),
    websites: normalizeStrings(arrayOf(p.websites, `${path}.websites`, warnings)),
    vat_status: optionalText(p.vat_status),
    bank_accounts: normalizeStrings(arrayOf(p.bank_accounts, `${path}.bank_accounts`, warnings)).map(normalizeBankAccount),
  };
}

function arrayOf(value: unknown, path: string, warnings: string[]): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  warnings.push(`${path}: not an array, ignored`);
  return [];
}

function normalizeAddress(value: unknown): Address | null {
  if (!isObject(value)) return null;
  const address: Address = {
    street: text(value.street),
    building: text(value.building),
    apartment: text(value.apartment),
    city: text(value.city),
    postal_code: text(value.postal_code),
    voivodeship: text(value.voivodeship),
    country_code: text(value.country_code) || 'PL',
  };
  const empty = !address.street && !address.building && !address.apartment && !address.city && !address.postal_code;
  return empty ? null : address;
}

function normalizeUnits(list: unknown[], path: string, warnings: string[]): LocalUnit[] {
  const out: LocalUnit[] = [];
  for (const [i, u] of list.entries()) {
    const identifier = isObject(u) ? text(u.identifier) : '';
    if (!isObject(u) || identifier === '') {
      warnings.push(`${path}.${i}: a unit needs an identifier, ignored`);
      continue;
    }
    out.push({
      identifier,
      name: text(u.name),
      address: normalizeAddress(u.address),
      dates: normalizeDates(arrayOf(u.dates, `${path}.${i}.dates`, warnings), `${path}.${i}.dates`, warnings),
    });
  }
  return out;
}

function normalizeContacts(list: unknown[], path: string, warnings: string[]): Contact[] {
  const out: Contact[] = [];
  for (const [i, c] of list.entries()) {
    const type = isObject(c) ? text(c.type).toLowerCase() : '';
    const value = isObject(c) ? text(c.value) : '';
    if (!CONTACT_TYPES.has(type) || value === '') {
      warnings.push(`${path}.${i}: a contact needs a type (phone, email or fax) and a value, ignored`);
      continue;
    }
    out.push({ type: type as ContactType, value });
  }
  return out;
}

function normalizeActivities(list: unknown[], path: string, warnings: string[]): Activity[] {
  const out: Activity[] = [];
  for (const [i, a] of list.entries()) {
    const code = isObject(a) ? normalizeActivityCode(text(a.code)) : '';
    if (!isObject(a) || code === '') {
      warnings.push(`${path}.${i}: an activity needs a code, ignored`);
      continue;
    }
    out.push({ code, name: text(a.name) || (pkdName(code) ?? ''), is_primary: a.is_primary === true });
  }
  return out;
}

function normalizeDates(list: unknown[], path: string, warnings: string[]): DatedEntry[] {
  const out: DatedEntry[] = [];
  for (const [i, d] of list.entries()) {
    const type = isObject(d) ? text(d.type).toLowerCase() : '';
    const date = isObject(d) ? isoDate(text(d.date)) : null;
    if (!DATE_TYPE_SET.has(type) || date === null) {
      warnings.push(`${path}.${i}: a date needs a known type and a YYYY-MM-DD date, ignored`);
      continue;
    }
    out.push({ type: type as DateType, date });
  }
  return out;
}

/** `YYYY-MM-DD`, also taken from the front of a timestamp; null when it is not a real day. */
function isoDate(value: string): string | null {
  const m = ISO_DATE.exec(value);
  if (!m) return null;
  const [, y, mo, d] = m;
  const t = Date.UTC(Number(y), Number(mo) - 1, Number(d));
  const check = new Date(t);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)) return null;
  return `${y}-${mo}-${d}`;
}

function normalizeStrings(list: unknown[]): string[] {
  const out: string[] = [];
  for (const v of list) {
    const t = text(v);
    if (t !== '') out.push(t);
  }
  return out;
}

/** `PL61 1090 1014 0000 0712 1981 2874` → `61109010140000071219812874`; anything else as given. */
function normalizeBankAccount(value: string): string {
  const compact = value.replace(/[\s-]+/g, '').replace(/^PL/i, '');
  return /^\d{26}$/.test(compact) ? compact : value;
}

function normalizePersons(list: unknown[], warnings: string[]): Person[] {
  const out: Person[] = [];
  for (const [i, p] of list.entries()) {
    const fullName = isObject(p) ? text(p.full_name) : '';
    if (!isObject(p) || fullName === '') {
      warnings.push(`persons.${i}: a person needs a full_name, ignored`);
      continue;
    }
    out.push({ full_name: fullName, role: text(p.role) });
  }
  return out;
}
