import type { CompanyStatus } from '../../registry/model.ts';
import type { SearchFilters } from './filters.ts';

/**
 * The search index: every company's search columns in memory, in result order (activity_start
 * newest first, then primary identifier), as typed arrays, with posting lists for the selective
 * filters (city, postal code, activity code, name word). A query is one pass over the candidate
 * rows: the rows of its most selective posting list, or the slice of the order its date bounds
 * select, or every row. Counting a million rows this way takes a few milliseconds, which is what
 * makes an exact `total` affordable for any filter combination (docs/search.md).
 *
 * The main part is immutable once built. Companies that change afterwards (on-demand imports)
 * are masked out of it and kept in a small delta, merged into every answer.
 */

/** One company's search columns, as the repository reads them. */
export interface IndexRow {
  id: string;
  /** YYYY-MM-DD or null. */
  activityStart: string | null;
  primaryIdentifier: string;
  status: CompanyStatus;
  voivodeship: string | null;
  city: string | null;
  /** Five digits, or null. */
  postalCode: string | null;
  legalForm: string | null;
  hasPhone: boolean;
  hasEmail: boolean;
  hasFax: boolean;
  activityCodes: readonly string[];
  /** The folded name (companies.name_folded). */
  nameFolded: string;
}

export interface IndexAnswer {
  total: number;
  /** Company ids of the requested window, in result order. */
  ids: string[];
}

const STATUS_CODE: Record<CompanyStatus, number> = { ACTIVE: 0, SUSPENDED: 1, DELETED: 2 };
const PHONE = 1;
const EMAIL = 2;
const FAX = 4;
/** Sorts after every real day in a descending order: companies without a start date come last. */
const NO_DAY = -2147483648;
const DAY_MS = 86_400_000;
const WORD_SPLIT = /[^a-z0-9]+/;

function dayOf(date: string | null): number {
  if (date === null) return NO_DAY;
  return Math.round(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

/**
 * An order-preserving number for identifiers of up to ten digits: each position is 0 (past the
 * end) or digit + 1, in base 11, so `12` < `123` < `13` as with text comparison. Anything else
 * (never seen: identifiers are stored as digits) sorts after every digit.
 */
export function identifierSortKey(s: string): number {
  let key = 0;
  for (let i = 0; i < 10; i++) {
    let d = 0;
    if (i < s.length) {
      const c = s.charCodeAt(i) - 48;
      d = c >= 0 && c <= 9 ? c + 1 : 10;
    }
    key = key * 11 + d;
  }
  return key;
}

export function nameWords(nameFolded: string): string[] {
  return [...new Set(nameFolded.split(WORD_SPLIT).filter((w) => w !== ''))];
}

function flagsOf(r: IndexRow): number {
  return (r.hasPhone ? PHONE : 0) | (r.hasEmail ? EMAIL : 0) | (r.hasFax ? FAX : 0);
}

const CONTACT_FLAG = { phone: PHONE, email: EMAIL, fax: FAX } as const;

/** Whether one row passes a filter set: the reference semantics, used for the delta. */
export function rowMatches(r: IndexRow, f: SearchFilters): boolean {
  if (r.status !== f.status) return false;
  if (f.hasContact !== null && (flagsOf(r) & CONTACT_FLAG[f.hasContact]) === 0) return false;
  if (f.voivodeship !== null && r.voivodeship !== f.voivodeship) return false;
  if (f.city !== null && r.city !== f.city) return false;
  if (f.postalCode !== null && r.postalCode !== f.postalCode) return false;
  if (f.legalForm !== null && r.legalForm !== f.legalForm) return false;
  if (f.activityStartFrom !== null && (r.activityStart === null || r.activityStart < f.activityStartFrom)) return false;
  if (f.activityStartTo !== null && (r.activityStart === null || r.activityStart > f.activityStartTo)) return false;
  if (f.activityCodes.length > 0 && !r.activityCodes.some((c) => f.activityCodes.includes(c))) return false;
  if (f.activityPrefix !== null && !r.activityCodes.some((c) => c.startsWith(f.activityPrefix!))) return false;
  if (f.nameWords.length > 0) {
    const words = nameWords(r.nameFolded);
    if (!f.nameWords.every((q) => words.some((w) => w.startsWith(q)))) return false;
  }
  return true;
}

/** Result order: activity_start newest first (none last), then primary identifier, then id. */
function compareRows(a: { day: number; key: number; id: number }, b: { day: number; key: number; id: number }): number {
  return b.day - a.day || a.key - b.key || a.id - b.id;
}

// ------------------------------------------------------------------------------------------------
// Building

/** An append-only typed array that doubles when full. */
class Growable<T extends Uint32Array | Float64Array> {
  data: T;
  length = 0;
  constructor(private readonly make: (size: number) => T) {
    this.data = make(1024);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }
}
const growableU32 = () => new Growable((n) => new Uint32Array(n));
const growableF64 = () => new Growable((n) => new Float64Array(n));

/** Strings to small integers (1-based; 0 means none). */
class Dictionary {
  readonly ids = new Map<string, number>();
  readonly values: string[] = [''];
  idOf(value: string | null): number {
    if (value === null || value === '') return 0;
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.ids.set(value, id);
      this.values.push(value);
    }
    return id;
  }
}

/** Compressed sparse rows: the values of row r are `values[offsets[r] .. offsets[r + 1])`. */
interface Csr {
  offsets: Uint32Array;
  values: Uint32Array;
}

/** Posting lists: the (ascending) rows holding key k are `rows[offsets[k] .. offsets[k + 1])`. */
interface Postings {
  offsets: Uint32Array;
  rows: Uint32Array;
}

/** Lets other work run during a long computation (a build in a serving process); no-op in tests. */
export type Pause = () => Promise<void> | void;
const noPause: Pause = () => {};
/** Rows between pauses: a few milliseconds of work. */
const SLICE = 1 << 16;

async function postingsOf(keyCount: number, n: number, pause: Pause, keysOfRow: (r: number, emit: (k: number) => void) => void): Promise<Postings> {
  const counts = new Uint32Array(keyCount + 1);
  const count = (k: number) => { counts[k + 1]!++; };
  for (let r = 0; r < n; r++) {
    keysOfRow(r, count);
    if ((r & (SLICE - 1)) === SLICE - 1) await pause();
  }
  for (let k = 0; k < keyCount; k++) counts[k + 1]! += counts[k]!;
  const offsets = counts;
  const fill = offsets.slice(0, keyCount);
  const rows = new Uint32Array(offsets[keyCount]!);
  let row = 0;
  const put = (k: number) => { rows[fill[k]!++] = row; };
  for (let r = 0; r < n; r++) {
    row = r;
    keysOfRow(r, put);
    if ((r & (SLICE - 1)) === SLICE - 1) await pause();
  }
  return { offsets, rows };
}

/** Sorts strings in slices merged in pairs, pausing between steps, so a large dictionary never blocks for long. */
async function sortStrings(values: string[], pause: Pause): Promise<string[]> {
  const runs: string[][] = [];
  for (let i = 0; i < values.length; i += SLICE) {
    runs.push(values.slice(i, i + SLICE).sort());
    await pause();
  }
  let level = runs;
  while (level.length > 1) {
    const next: string[][] = [];
    for (let i = 0; i < level.length; i += 2) {
      const a = level[i]!;
      const b = level[i + 1];
      if (!b) { next.push(a); continue; }
      const out: string[] = new Array(a.length + b.length);
      let x = 0;
      let y = 0;
      let w = 0;
      while (x < a.length && y < b.length) out[w++] = a[x]! <= b[y]! ? a[x++]! : b[y++]!;
      while (x < a.length) out[w++] = a[x++]!;
      while (y < b.length) out[w++] = b[y++]!;
      next.push(out);
      await pause();
    }
    level = next;
  }
  return level[0] ?? [];
}

export class SearchIndexBuilder {
  private readonly ids = growableF64();
  private readonly days = growableU32();
  private readonly keys = growableF64();
  private readonly status = growableU32();
  private readonly voiv = growableU32();
  private readonly legal = growableU32();
  private readonly flags = growableU32();
  private readonly city = growableU32();
  private readonly postal = growableU32();
  private readonly codeOffsets = growableU32();
  private readonly codeValues = growableU32();
  private readonly wordOffsets = growableU32();
  private readonly wordValues = growableU32();
  private readonly voivodeships = new Dictionary();
  private readonly legalForms = new Dictionary();
  private readonly cities = new Dictionary();
  private readonly codes = new Dictionary();
  private readonly words = new Dictionary();
  /** Whether rows came in result order (the repository reads them so): then nothing is reordered. */
  private inOrder = true;
  private last = { day: 0, key: 0, id: 0 };

  constructor() {
    this.codeOffsets.push(0);
    this.wordOffsets.push(0);
  }

  get size(): number {
    return this.ids.length;
  }

  add(r: IndexRow): void {
    const here = { day: dayOf(r.activityStart), key: identifierSortKey(r.primaryIdentifier), id: Number(r.id) };
    if (this.ids.length > 0 && compareRows(this.last, here) > 0) this.inOrder = false;
    this.last = here;
    this.ids.push(here.id);
    this.days.push(here.day >>> 0);
    this.keys.push(here.key);
    this.status.push(STATUS_CODE[r.status]);
    this.voiv.push(this.voivodeships.idOf(r.voivodeship));
    this.legal.push(this.legalForms.idOf(r.legalForm));
    this.flags.push(flagsOf(r));
    this.city.push(this.cities.idOf(r.city));
    this.postal.push(r.postalCode && /^\d{5}$/.test(r.postalCode) ? Number(r.postalCode) + 1 : 0);
    for (const c of new Set(r.activityCodes)) this.codeValues.push(this.codes.idOf(c));
    this.codeOffsets.push(this.codeValues.length);
    for (const w of nameWords(r.nameFolded)) this.wordValues.push(this.words.idOf(w));
    this.wordOffsets.push(this.wordValues.length);
  }

  async build(pause: Pause = noPause): Promise<SearchIndex> {
    const n = this.ids.length;
    const ids = this.ids.data;
    const days = new Int32Array(this.days.data.buffer, 0, this.days.data.length);
    const keys = this.keys.data;
    let order: Uint32Array | null = null;
    if (!this.inOrder) {
      order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      order.sort((a, b) => days[b]! - days[a]! || keys[a]! - keys[b]! || ids[a]! - ids[b]!);
    }

    // Word ids in alphabetical order, so that a word prefix is a contiguous range of ids.
    const sortedWords = await sortStrings(this.words.values.slice(1), pause);
    const rank = new Map<string, number>();
    for (let i = 0; i < sortedWords.length; i++) rank.set(sortedWords[i]!, i);
    const wordRemap = new Uint32Array(this.words.values.length);
    for (let i = 1; i < this.words.values.length; i++) wordRemap[i] = rank.get(this.words.values[i]!)!;
    rank.clear();
    await pause();

    const take = <T extends Float64Array | Uint32Array>(src: T, into: T): T => {
      if (order === null) into.set(src.subarray(0, n));
      else for (let r = 0; r < n; r++) into[r] = src[order[r]!]!;
      return into;
    };
    const narrow = <T extends Uint8Array | Uint16Array>(src: Uint32Array, into: T): T => {
      for (let r = 0; r < n; r++) into[r] = src[order === null ? r : order[r]!]!;
      return into;
    };
    const cols = {
      ids: take(ids, new Float64Array(n)),
      days: new Int32Array(take(this.days.data, new Uint32Array(n)).buffer),
      keys: take(keys, new Float64Array(n)),
      status: narrow(this.status.data, new Uint8Array(n)),
      voiv: narrow(this.voiv.data, new Uint16Array(n)),
      legal: narrow(this.legal.data, new Uint16Array(n)),
      flags: narrow(this.flags.data, new Uint8Array(n)),
      city: take(this.city.data, new Uint32Array(n)),
      postal: take(this.postal.data, new Uint32Array(n)),
    };
    await pause();
    const codeOffsets = new Uint32Array(n + 1);
    const codeValues = new Uint32Array(this.codeValues.length);
    const wordOffsets = new Uint32Array(n + 1);
    const wordValues = new Uint32Array(this.wordValues.length);
    const srcCodeOff = this.codeOffsets.data;
    const srcCodes = this.codeValues.data;
    const srcWordOff = this.wordOffsets.data;
    const srcWords = this.wordValues.data;
    let codeAt = 0;
    let wordAt = 0;
    for (let r = 0; r < n; r++) {
      const i = order === null ? r : order[r]!;
      for (let j = srcCodeOff[i]!; j < srcCodeOff[i + 1]!; j++) codeValues[codeAt++] = srcCodes[j]!;
      codeOffsets[r + 1] = codeAt;
      for (let j = srcWordOff[i]!; j < srcWordOff[i + 1]!; j++) wordValues[wordAt++] = wordRemap[srcWords[j]!]!;
      wordOffsets[r + 1] = wordAt;
      if ((r & (SLICE - 1)) === SLICE - 1) await pause();
    }
    return SearchIndex.create({
      n, ...cols,
      codes: { offsets: codeOffsets, values: codeValues },
      words: { offsets: wordOffsets, values: wordValues },
      voivodeships: this.voivodeships.ids,
      legalForms: this.legalForms.ids,
      cities: this.cities.ids,
      codeIds: this.codes.ids,
      sortedWords,
    }, pause);
  }
}

// ------------------------------------------------------------------------------------------------
// Querying

interface IndexParts {
  n: number;
  ids: Float64Array;
  days: Int32Array;
  keys: Float64Array;
  status: Uint8Array;
  voiv: Uint16Array;
  legal: Uint16Array;
  flags: Uint8Array;
  city: Uint32Array;
  postal: Uint32Array;
  codes: Csr;
  words: Csr;
  voivodeships: ReadonlyMap<string, number>;
  legalForms: ReadonlyMap<string, number>;
  cities: ReadonlyMap<string, number>;
  codeIds: ReadonlyMap<string, number>;
  sortedWords: readonly string[];
}

interface DeltaRow {
  row: IndexRow;
  day: number;
  key: number;
  id: number;
}

// The low-cardinality columns packed in one word per row, so that status, contact type,
// voivodeship, legal form and a one-digit activity prefix cost one read and one comparison:
// status in bits 0-1, contact flags 2-4, voivodeship 5-11, legal form 12-21, and in 22-31 a bit
// per first digit of the row's activity codes. Ids past a field's width share its last value and
// are told apart by their own column. The histogram counts rows by bits 0-21.
const VOIV_SHIFT = 5;
const VOIV_MAX = 127;
const LEGAL_SHIFT = 12;
const LEGAL_MAX = 1023;
const DIGITS_SHIFT = 22;
const HISTOGRAM_BITS = (1 << DIGITS_SHIFT) - 1;

/** A query made concrete against this index's dictionaries. */
interface Plan {
  mask: number;
  want: number;
  /** Set when the asked voivodeship or legal form has an id past its field's width. */
  exactVoiv: number;
  exactLegal: number;
  city: number;
  postal: number;
  /** Code ids any of which a row needs (activity codes, or the prefix when no codes are given). */
  codeMask: Uint8Array | null;
  /** Code ids with the prefix, when codes are given too. */
  prefixMask: Uint8Array | null;
  wordRanges: [number, number][];
  lo: number;
  hi: number;
  dated: boolean;
  impossible: boolean;
}

function lowerBound(words: readonly string[], w: string): number {
  let lo = 0;
  let hi = words.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (words[mid]! < w) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function mergeTwo(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let w = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) { out[w++] = x; i++; } else if (y < x) { out[w++] = y; j++; } else { out[w++] = x; i++; j++; }
  }
  while (i < a.length) out[w++] = a[i++]!;
  while (j < b.length) out[w++] = b[j++]!;
  return out.subarray(0, w);
}

/** Rows in both ascending lists. */
function intersectTwo(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let w = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) i++;
    else if (y < x) j++;
    else { out[w++] = x; i++; j++; }
  }
  return out.subarray(0, w);
}

/** Sorted, distinct rows of several ascending lists (merged in pairs: linear in their sizes per level). */
function unionOf(lists: Uint32Array[]): Uint32Array {
  if (lists.length === 0) return new Uint32Array(0);
  let level = lists;
  while (level.length > 1) {
    const next: Uint32Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? mergeTwo(level[i]!, level[i + 1]!) : level[i]!);
    level = next;
  }
  return level[0]!;
}

export class SearchIndex {
  private readonly p: IndexParts;
  private readonly dims: Int32Array;
  /** Main rows by packed low-cardinality value: a query on those columns alone is counted from here. */
  private readonly histogram: Map<number, number>;
  private readonly cityPostings: Postings;
  private readonly postalPostings: Postings;
  private readonly codePostings: Postings;
  /** Rows by the first two characters of any of their codes (an activity prefix of two). */
  private readonly prefix2Postings: Postings;
  private readonly prefix2Ids: Map<string, number>;
  private readonly wordPostings: Postings;
  /** Main rows replaced by the delta. */
  private readonly masked: Uint8Array;
  private maskedCount = 0;
  private readonly delta = new Map<string, DeltaRow>();
  /** Rows without an activity start begin here (they sort last). */
  private readonly firstUndated: number;

  private constructor(parts: IndexParts, derived: {
    dims: Int32Array; histogram: Map<number, number>; prefix2Ids: Map<string, number>; firstUndated: number;
    city: Postings; postal: Postings; code: Postings; prefix2: Postings; word: Postings;
  }) {
    this.p = parts;
    this.masked = new Uint8Array(parts.n);
    this.dims = derived.dims;
    this.histogram = derived.histogram;
    this.prefix2Ids = derived.prefix2Ids;
    this.firstUndated = derived.firstUndated;
    this.cityPostings = derived.city;
    this.postalPostings = derived.postal;
    this.codePostings = derived.code;
    this.prefix2Postings = derived.prefix2;
    this.wordPostings = derived.word;
  }

  /** Derives the packed column and the posting lists, pausing every few milliseconds. */
  static async create(p: IndexParts, pause: Pause = noPause): Promise<SearchIndex> {
    const dims = new Int32Array(p.n);
    const histogram = new Map<number, number>();
    const prefix2Ids = new Map<string, number>();
    const codeFirstDigit = new Uint16Array(p.codeIds.size + 1);
    const codePrefix2 = new Uint32Array(p.codeIds.size + 1);
    for (const [code, id] of p.codeIds) {
      const d = code.charCodeAt(0) - 48;
      if (d >= 0 && d <= 9) codeFirstDigit[id] = 1 << d;
      if (code.length >= 2) {
        const two = code.slice(0, 2);
        let pid = prefix2Ids.get(two);
        if (pid === undefined) prefix2Ids.set(two, (pid = prefix2Ids.size + 1));
        codePrefix2[id] = pid;
      }
    }
    for (let r = 0; r < p.n; r++) {
      const packed = p.status[r]! | (p.flags[r]! << 2) | (Math.min(p.voiv[r]!, VOIV_MAX) << VOIV_SHIFT) | (Math.min(p.legal[r]!, LEGAL_MAX) << LEGAL_SHIFT);
      histogram.set(packed, (histogram.get(packed) ?? 0) + 1);
      let digits = 0;
      for (let j = p.codes.offsets[r]!; j < p.codes.offsets[r + 1]!; j++) digits |= codeFirstDigit[p.codes.values[j]!]!;
      dims[r] = packed | (digits << DIGITS_SHIFT);
      if ((r & (SLICE - 1)) === SLICE - 1) await pause();
    }
    let lo = 0;
    let hi = p.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p.days[mid]! !== NO_DAY) lo = mid + 1;
      else hi = mid;
    }
    const city = await postingsOf(p.cities.size + 1, p.n, pause, (r, emit) => { if (p.city[r]! !== 0) emit(p.city[r]!); });
    const postal = await postingsOf(100_001, p.n, pause, (r, emit) => { if (p.postal[r]! !== 0) emit(p.postal[r]!); });
    const code = await postingsOf(p.codeIds.size + 1, p.n, pause, (r, emit) => {
      for (let j = p.codes.offsets[r]!; j < p.codes.offsets[r + 1]!; j++) emit(p.codes.values[j]!);
    });
    const prefix2 = await postingsOf(prefix2Ids.size + 1, p.n, pause, (r, emit) => {
      // A row with two codes of one division is listed once.
      const start = p.codes.offsets[r]!;
      for (let j = start; j < p.codes.offsets[r + 1]!; j++) {
        const k = codePrefix2[p.codes.values[j]!]!;
        if (k === 0) continue;
        let again = false;
        for (let i = start; i < j; i++) if (codePrefix2[p.codes.values[i]!] === k) again = true;
        if (!again) emit(k);
      }
    });
    const word = await postingsOf(p.sortedWords.length, p.n, pause, (r, emit) => {
      for (let j = p.words.offsets[r]!; j < p.words.offsets[r + 1]!; j++) emit(p.words.values[j]!);
    });
    return new SearchIndex(p, { dims, histogram, prefix2Ids, firstUndated: lo, city, postal, code, prefix2, word });
  }

  static fromRows(rows: Iterable<IndexRow>, pause?: Pause): Promise<SearchIndex> {
    const b = new SearchIndexBuilder();
    for (const r of rows) b.add(r);
    return b.build(pause);
  }

  /** Companies in the index (main rows not replaced, plus the delta). */
  get size(): number {
    return this.p.n - this.maskedCount + this.delta.size;
  }

  get deltaSize(): number {
    return this.delta.size;
  }

  /** Bytes held by the typed arrays (the bulk of the index). */
  get byteSize(): number {
    const p = this.p;
    const arrays: ArrayBufferView[] = [p.ids, p.days, p.keys, p.status, p.voiv, p.legal, p.flags, p.city, p.postal, p.codes.offsets, p.codes.values, p.words.offsets, p.words.values, this.masked, this.dims];
    for (const ps of [this.cityPostings, this.postalPostings, this.codePostings, this.prefix2Postings, this.wordPostings]) arrays.push(ps.offsets, ps.rows);
    return arrays.reduce((n, a) => n + a.byteLength, 0);
  }

  /** Replaces (or adds) one company: its main row, if any, is masked and the new row kept in the delta. */
  upsert(row: IndexRow): void {
    this.maskMain(Number(row.id));
    this.delta.set(row.id, { row, day: dayOf(row.activityStart), key: identifierSortKey(row.primaryIdentifier), id: Number(row.id) });
  }

  private maskMain(id: number): void {
    // A linear scan: upserts are rare (imports between rebuilds) and an id map would double the memory.
    const ids = this.p.ids;
    for (let r = 0; r < this.p.n; r++) {
      if (ids[r] === id) {
        if (this.masked[r] === 0) {
          this.masked[r] = 1;
          this.maskedCount++;
          const packed = this.dims[r]! & HISTOGRAM_BITS;
          this.histogram.set(packed, this.histogram.get(packed)! - 1);
        }
        return;
      }
    }
  }

  private codeMaskOf(pred: (code: string) => boolean): Uint8Array | null {
    const mask = new Uint8Array(this.p.codeIds.size + 1);
    let any = false;
    for (const [c, id] of this.p.codeIds) {
      if (pred(c)) {
        mask[id] = 1;
        any = true;
      }
    }
    return any ? mask : null;
  }

  private plan(f: SearchFilters): Plan {
    const p = this.p;
    const plan: Plan = {
      mask: 3, want: STATUS_CODE[f.status], exactVoiv: 0, exactLegal: 0, city: 0, postal: 0,
      codeMask: null, prefixMask: null, wordRanges: [], lo: 0, hi: p.n, dated: false, impossible: false,
    };
    if (f.hasContact !== null) {
      plan.mask |= CONTACT_FLAG[f.hasContact] << 2;
      plan.want |= CONTACT_FLAG[f.hasContact] << 2;
    }
    // A packed field holds ids below its max; a larger id is packed as max and checked exactly.
    const restrictPacked = (id: number | undefined, max: number, shift: number): number => {
      if (id === undefined) {
        plan.impossible = true;
        return 0;
      }
      plan.mask |= max << shift;
      plan.want |= Math.min(id, max) << shift;
      return id >= max ? id : 0;
    };
    if (f.voivodeship !== null) plan.exactVoiv = restrictPacked(p.voivodeships.get(f.voivodeship), VOIV_MAX, VOIV_SHIFT);
    if (f.legalForm !== null) plan.exactLegal = restrictPacked(p.legalForms.get(f.legalForm), LEGAL_MAX, LEGAL_SHIFT);
    if (f.city !== null) {
      plan.city = p.cities.get(f.city) ?? -1;
      if (plan.city < 0) plan.impossible = true;
    }
    if (f.postalCode !== null) plan.postal = Number(f.postalCode) + 1;

    const prefix = f.activityPrefix;
    if (f.activityCodes.length > 0) {
      const wanted = new Set(f.activityCodes);
      plan.codeMask = this.codeMaskOf((c) => wanted.has(c));
      if (plan.codeMask === null) plan.impossible = true;
    }
    if (prefix !== null) {
      if (prefix.length === 1) {
        const bit = 1 << (DIGITS_SHIFT + prefix.charCodeAt(0) - 48);
        plan.mask |= bit;
        plan.want |= bit;
      } else {
        const mask = this.codeMaskOf((c) => c.startsWith(prefix));
        if (mask === null) plan.impossible = true;
        if (plan.codeMask === null) plan.codeMask = mask;
        else plan.prefixMask = mask;
      }
    }
    for (const w of f.nameWords) {
      const a = lowerBound(p.sortedWords, w);
      const b = lowerBound(p.sortedWords, `${w}\uffff`);
      if (a === b) plan.impossible = true;
      plan.wordRanges.push([a, b]);
    }

    if (f.activityStartFrom !== null || f.activityStartTo !== null) {
      // Rows are in descending day order: the bounds select one contiguous slice.
      plan.dated = true;
      const days = p.days;
      const firstAtMost = (day: number) => {
        let lo = 0;
        let hi = this.firstUndated;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (days[mid]! > day) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
      plan.lo = f.activityStartTo !== null ? firstAtMost(dayOf(f.activityStartTo)) : 0;
      plan.hi = f.activityStartFrom !== null ? firstAtMost(dayOf(f.activityStartFrom) - 1) : this.firstUndated;
      if (plan.hi < plan.lo) plan.hi = plan.lo;
    }
    return plan;
  }

  /**
   * The candidate rows: the smallest posting list (or union of lists) when it is clearly smaller
   * than the slice of rows the date bounds leave; null means scan the slice (sequential reads of
   * one packed word a row beat random reads of a long list).
   */
  private candidates(f: SearchFilters, plan: Plan): Uint32Array | null {
    const options: { size: number; rows: () => Uint32Array }[] = [];
    const list = (ps: Postings, k: number) => ps.rows.subarray(ps.offsets[k]!, ps.offsets[k + 1]!);
    const ofMask = (mask: Uint8Array) => {
      const lists: Uint32Array[] = [];
      let size = 0;
      for (let k = 1; k < mask.length; k++) {
        if (mask[k]) {
          const l = list(this.codePostings, k);
          lists.push(l);
          size += l.length;
        }
      }
      return { size, rows: () => unionOf(lists) };
    };
    if (plan.city > 0) {
      const l = list(this.cityPostings, plan.city);
      options.push({ size: l.length, rows: () => l });
    }
    if (plan.postal > 0 && plan.postal <= 100_000) {
      const l = list(this.postalPostings, plan.postal);
      options.push({ size: l.length, rows: () => l });
    }
    const prefix = f.activityPrefix;
    if (prefix !== null && prefix.length === 2) {
      const k = this.prefix2Ids.get(prefix);
      if (k !== undefined) {
        const l = list(this.prefix2Postings, k);
        options.push({ size: l.length, rows: () => l });
      }
    } else if (prefix !== null && prefix.length > 2) {
      const mask = plan.prefixMask ?? (f.activityCodes.length === 0 ? plan.codeMask : null);
      if (mask) options.push(ofMask(mask));
    }
    if (f.activityCodes.length > 0 && plan.codeMask) options.push(ofMask(plan.codeMask));
    for (const [a, b] of plan.wordRanges) {
      const ps = this.wordPostings;
      options.push({
        size: ps.offsets[b]! - ps.offsets[a]!,
        rows: () => unionOf(Array.from({ length: b - a }, (_, i) => list(ps, a + i))),
      });
    }
    if (options.length === 0) return null;
    options.sort((a, b) => a.size - b.size);
    const best = options[0]!;
    if (best.size * 6 > plan.hi - plan.lo) return null;
    // Two lists of similar size (a city and an activity): merging them is cheaper than checking
    // every row of the first against the second's column.
    const second = options[1];
    if (second !== undefined && second.size <= best.size * 10) return intersectTwo(best.rows(), second.rows());
    return best.rows();
  }

  /** Total matches and the company ids of rows [offset, offset + limit) in result order. */
  query(f: SearchFilters, offset: number, limit: number): IndexAnswer {
    const p = this.p;
    const plan = this.plan(f);
    const dm = this.delta.size === 0 ? [] : [...this.delta.values()].filter((d) => rowMatches(d.row, f)).sort(compareRows);
    const ids: string[] = [];
    const ids64 = p.ids;
    let position = 0;
    let j = 0;
    // Emits main row r in result order, after the delta rows that come before it (delta present only).
    const emitMerged = (r: number) => {
      const here = { day: p.days[r]!, key: p.keys[r]!, id: ids64[r]! };
      while (j < dm.length && compareRows(dm[j]!, here) < 0) {
        if (position >= offset && ids.length < limit) ids.push(dm[j]!.row.id);
        position++;
        j++;
      }
      if (position >= offset && ids.length < limit) ids.push(String(ids64[r]!));
      position++;
    };
    const merging = dm.length > 0;

    if (!plan.impossible && plan.hi > plan.lo) {
      const dims = this.dims;
      const mask = plan.mask;
      const want = plan.want;
      const masked = this.maskedCount > 0 ? this.masked : null;
      const rowChecks = plan.city !== 0 || plan.postal !== 0 || plan.codeMask !== null || plan.wordRanges.length > 0
        || plan.exactVoiv !== 0 || plan.exactLegal !== 0;

      if (!rowChecks && !plan.dated && (mask & ~HISTOGRAM_BITS) === 0) {
        // Only packed columns: the histogram counts, a scan from the top finds the page.
        let mainTotal = 0;
        for (const [packed, count] of this.histogram) if ((packed & mask) === want) mainTotal += count;
        const end = offset + limit;
        for (let r = 0; r < p.n && position < end && ids.length < limit; r++) {
          if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
          if (merging) emitMerged(r);
          else {
            if (position >= offset) ids.push(String(ids64[r]!));
            position++;
          }
        }
        // Every main match before the page's end was emitted; the rest are counted, not visited.
        const emittedMain = position - j;
        position += mainTotal - emittedMain;
      } else if (!rowChecks) {
        // Packed columns within a slice of dates: one comparison a row.
        for (let r = plan.lo, e = plan.hi; r < e; r++) {
          if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
          if (merging) emitMerged(r);
          else {
            if (position >= offset && ids.length < limit) ids.push(String(ids64[r]!));
            position++;
          }
        }
      } else {
        const { city, postal, voiv, legal } = p;
        const codeOff = p.codes.offsets;
        const codeVal = p.codes.values;
        const wordOff = p.words.offsets;
        const wordVal = p.words.values;
        const { city: pc, postal: pp, codeMask, prefixMask, wordRanges, exactVoiv, exactLegal } = plan;
        const passes = (r: number): boolean => {
          if ((dims[r]! & mask) !== want) return false;
          if (pc !== 0 && city[r] !== pc) return false;
          if (pp !== 0 && postal[r] !== pp) return false;
          if (masked !== null && masked[r] !== 0) return false;
          if (exactVoiv !== 0 && voiv[r] !== exactVoiv) return false;
          if (exactLegal !== 0 && legal[r] !== exactLegal) return false;
          if (codeMask !== null) {
            let ok = false;
            for (let k = codeOff[r]!, e = codeOff[r + 1]!; k < e; k++) if (codeMask[codeVal[k]!] !== 0) { ok = true; break; }
            if (!ok) return false;
          }
          if (prefixMask !== null) {
            let ok = false;
            for (let k = codeOff[r]!, e = codeOff[r + 1]!; k < e; k++) if (prefixMask[codeVal[k]!] !== 0) { ok = true; break; }
            if (!ok) return false;
          }
          for (let q = 0; q < wordRanges.length; q++) {
            const a = wordRanges[q]![0];
            const b = wordRanges[q]![1];
            let ok = false;
            for (let k = wordOff[r]!, e = wordOff[r + 1]!; k < e; k++) {
              const w = wordVal[k]!;
              if (w >= a && w < b) { ok = true; break; }
            }
            if (!ok) return false;
          }
          return true;
        };
        const rows = this.candidates(f, plan);
        const lo = plan.lo;
        const hi = plan.hi;
        const n = rows === null ? hi - lo : rows.length;
        for (let i = 0; i < n; i++) {
          const r = rows === null ? lo + i : rows[i]!;
          if (r < lo || r >= hi || !passes(r)) continue;
          if (merging) emitMerged(r);
          else {
            if (position >= offset && ids.length < limit) ids.push(String(ids64[r]!));
            position++;
          }
        }
      }
    }
    while (j < dm.length) {
      if (position >= offset && ids.length < limit) ids.push(dm[j]!.row.id);
      position++;
      j++;
    }
    return { total: position, ids };
  }
}
