import { createReadStream } from 'node:fs';
import type {
  Activity,
  Address,
  CompanySnapshot,
  Contact,
  ContactType,
  DatedEntry,
  DateType,
  Identifier,
  IdentifierType,
  LocalUnit,
  Person,
  Profile,
  SourceName,
} from '../model.ts';
import { DATE_TYPES, IDENTIFIER_TYPES } from '../model-lists.ts';
import { parseIdentifier } from '../../lib/identifiers.ts';
import { normalizeActivityCode } from '../../lib/text.ts';
import { unstorableTextFields } from '../../lib/storable-text.ts';
import { pkdName } from '../dictionaries.ts';
import type { RegistrySource } from './source.ts';
import { MAX_BACKFILL_DAYS } from './backfill.ts';

/**
 * The `file:PATH` source: a snapshot NDJSON file, one company a line in the shape of
 * `CompanySnapshot` (docs/api-contract.md, "Snapshot NDJSON"). Every day's run reads the whole file; a company that
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
    maxBackfillDays: MAX_BACKFILL_DAYS.file,
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

/** The snapshots of a file, as the source reads them (the daily run reads through this to count the lines skipped). */
export async function* readSnapshotFile(
  path: string,
  options: FileSourceOptions,
  signal: AbortSignal | undefined,
): AsyncGenerator<CompanySnapshot> {
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

export type ParsedSnapshot = { ok: true; snapshot: CompanySnapshot; warnings: string[] } | { ok: false; error: string };

/** One NDJSON line to a normalised snapshot, or the reason it cannot be used. */
export function parseSnapshotLine(line: string): ParsedSnapshot {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return { ok: false, error: `invalid JSON: ${(err as Error).message}` };
  }
  // Text PostgreSQL cannot store (a NUL, an unpaired surrogate) can only come as a `\u` escape: a
  // raw control character is not JSON, and bytes that are not UTF-8 were read as U+FFFD. Such a
  // line is refused whole, as the API refuses such a field, rather than stored in part.
  if (line.includes('\\u')) {
    const bad = unstorableTextFields(raw);
    if (bad.length > 0)
      return {
        ok: false,
        error: `text that cannot be stored (a NUL or an unpaired surrogate) in ${bad.slice(0, 3).join(', ') || 'the line'}`,
      };
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
  const rawProfiles = (data.profiles as unknown[] | null) ?? [];
  for (let i = 0; i < rawProfiles.length; i++) {
    const p = rawProfiles[i];
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
  for (let i = 0; i < list.length; i++) {
    const entry = list[i];
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
    // A handful of identifiers: a scan beats a Set of "type:value" keys.
    if (out.some((x) => x.type === type && x.value === parsed.value)) continue;
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
    units: normalizeUnits(arrayOf(p.units, path, 'units', warnings), path, warnings),
    contacts: normalizeContacts(arrayOf(p.contacts, path, 'contacts', warnings), path, warnings),
    activities: normalizeActivities(arrayOf(p.activities, path, 'activities', warnings), path, warnings),
    dates: normalizeDates(arrayOf(p.dates, path, 'dates', warnings), path, 'dates', warnings),
    websites: normalizeStrings(arrayOf(p.websites, path, 'websites', warnings)),
    vat_status: optionalText(p.vat_status),
    bank_accounts: normalizeBankAccounts(arrayOf(p.bank_accounts, path, 'bank_accounts', warnings)),
  };
}

// Paths in warnings (`profiles.0.dates.2`) are built only when a warning is: a load reads millions
// of lines that have none.
function arrayOf(value: unknown, path: string, field: string, warnings: string[]): readonly unknown[] {
  if (value === undefined || value === null) return EMPTY;
  if (Array.isArray(value)) return value;
  warnings.push(`${path}.${field}: not an array, ignored`);
  return EMPTY;
}

const EMPTY: readonly unknown[] = Object.freeze([]) as readonly unknown[];

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

function normalizeUnits(list: readonly unknown[], path: string, warnings: string[]): LocalUnit[] {
  const out: LocalUnit[] = [];
  for (let i = 0; i < list.length; i++) {
    const u = list[i];
    const identifier = isObject(u) ? text(u.identifier) : '';
    if (!isObject(u) || identifier === '') {
      warnings.push(`${path}.units.${i}: a unit needs an identifier, ignored`);
      continue;
    }
    const unitPath = `${path}.units.${i}`;
    out.push({
      identifier,
      name: text(u.name),
      address: normalizeAddress(u.address),
      dates: normalizeDates(arrayOf(u.dates, unitPath, 'dates', warnings), unitPath, 'dates', warnings),
    });
  }
  return out;
}

function normalizeContacts(list: readonly unknown[], path: string, warnings: string[]): Contact[] {
  const out: Contact[] = [];
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    const type = isObject(c) ? text(c.type).toLowerCase() : '';
    const value = isObject(c) ? text(c.value) : '';
    if (!CONTACT_TYPES.has(type) || value === '') {
      warnings.push(`${path}.contacts.${i}: a contact needs a type (phone, email or fax) and a value, ignored`);
      continue;
    }
    out.push({ type: type as ContactType, value });
  }
  return out;
}

function normalizeActivities(list: readonly unknown[], path: string, warnings: string[]): Activity[] {
  const out: Activity[] = [];
  for (let i = 0; i < list.length; i++) {
    const a = list[i];
    const code = isObject(a) ? normalizeActivityCode(text(a.code)) : '';
    if (!isObject(a) || code === '') {
      warnings.push(`${path}.activities.${i}: an activity needs a code, ignored`);
      continue;
    }
    out.push({ code, name: text(a.name) || (pkdName(code) ?? ''), is_primary: a.is_primary === true });
  }
  return out;
}

function normalizeDates(list: readonly unknown[], path: string, field: string, warnings: string[]): DatedEntry[] {
  const out: DatedEntry[] = [];
  for (let i = 0; i < list.length; i++) {
    const d = list[i];
    const type = isObject(d) ? text(d.type).toLowerCase() : '';
    const date = isObject(d) ? isoDate(text(d.date)) : null;
    if (!DATE_TYPE_SET.has(type) || date === null) {
      warnings.push(`${path}.${field}.${i}: a date needs a known type and a YYYY-MM-DD date, ignored`);
      continue;
    }
    out.push({ type: type as DateType, date });
  }
  return out;
}

const DIGIT_0 = 48;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number of the `count` ASCII digits at `start`, or -1. */
function digits(s: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) {
    const d = s.charCodeAt(i) - DIGIT_0;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * `YYYY-MM-DD`, also taken from the front of a timestamp; null when it is not a real day (years
 * before 100 included, as JavaScript's Date reads them as 19xx). Checked by hand rather than
 * through Date: it runs for every date of every line of a load.
 */
function isoDate(value: string): string | null {
  if (value.length < 10 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return null;
  const y = digits(value, 0, 4);
  const mo = digits(value, 5, 2);
  const d = digits(value, 8, 2);
  if (y < 100 || mo < 1 || mo > 12 || d < 1) return null;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!)) return null;
  return value.length === 10 ? value : value.slice(0, 10);
}

function normalizeStrings(list: readonly unknown[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const t = text(list[i]);
    if (t !== '') out.push(t);
  }
  return out;
}

function normalizeBankAccounts(list: readonly unknown[]): string[] {
  const out = normalizeStrings(list);
  for (let i = 0; i < out.length; i++) out[i] = normalizeBankAccount(out[i]!);
  return out;
}

/** `PL61 1090 1014 0000 0712 1981 2874` → `61109010140000071219812874`; anything else as given. */
function normalizeBankAccount(value: string): string {
  const compact = value.replace(/[\s-]+/g, '').replace(/^PL/i, '');
  return /^\d{26}$/.test(compact) ? compact : value;
}

function normalizePersons(list: unknown[], warnings: string[]): Person[] {
  const out: Person[] = [];
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    const fullName = isObject(p) ? text(p.full_name) : '';
    if (!isObject(p) || fullName === '') {
      warnings.push(`persons.${i}: a person needs a full_name, ignored`);
      continue;
    }
    out.push({ full_name: fullName, role: text(p.role) });
  }
  return out;
}
