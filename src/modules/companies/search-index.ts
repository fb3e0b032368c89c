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
export function identifierKey(s: string): number {
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

class GrowableU32 {
  data = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }
}

class GrowableF64 {
  data = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

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

function postingsOf(keyCount: number, n: number, keysOfRow: (r: number, emit: (k: number) => void) => void): Postings {
  const counts = new Uint32Array(keyCount + 1);
  for (let r = 0; r < n; r++) keysOfRow(r, (k) => { counts[k + 1]!++; });
  for (let k = 0; k < keyCount; k++) counts[k + 1]! += counts[k]!;
  const offsets = counts;
  const fill = offsets.slice(0, keyCount);
  const rows = new Uint32Array(offsets[keyCount]!);
  for (let r = 0; r < n; r++) keysOfRow(r, (k) => { rows[fill[k]!++] = r; });
  return { offsets, rows };
}

export class SearchIndexBuilder {
  private readonly ids = new GrowableF64();
  private readonly days = new GrowableU32();
  private readonly keys = new GrowableF64();
  private readonly status = new GrowableU32();
  private readonly voiv = new GrowableU32();
  private readonly legal = new GrowableU32();
  private readonly flags = new GrowableU32();
  private readonly city = new GrowableU32();
  private readonly postal = new GrowableU32();
  private readonly codeOffsets = new GrowableU32();
  private readonly codeValues = new GrowableU32();
  private readonly wordOffsets = new GrowableU32();
  private readonly wordValues = new GrowableU32();
  private readonly voivodeships = new Dictionary();
  private readonly legalForms = new Dictionary();
  private readonly cities = new Dictionary();
  private readonly codes = new Dictionary();
  private readonly words = new Dictionary();

  constructor() {
    this.codeOffsets.push(0);
    this.wordOffsets.push(0);
  }

  get size(): number {
    return this.ids.length;
  }

  add(r: IndexRow): void {
    this.ids.push(Number(r.id));
    this.days.push(dayOf(r.activityStart) >>> 0);
    this.keys.push(identifierKey(r.primaryIdentifier));
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

  build(): SearchIndex {
    const n = this.ids.length;
    const ids = this.ids.data;
    const days = new Int32Array(this.days.data.buffer, 0, this.days.data.length);
    const keys = this.keys.data;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => days[b]! - days[a]! || keys[a]! - keys[b]! || ids[a]! - ids[b]!);

    // Word ids in alphabetical order, so that a word prefix is a contiguous range of ids.
    const wordList = this.words.values.slice(1);
    const sortedWords = [...wordList].sort();
    const rank = new Map(sortedWords.map((w, i) => [w, i] as const));
    const wordRemap = new Uint32Array(this.words.values.length);
    for (let i = 1; i < this.words.values.length; i++) wordRemap[i] = rank.get(this.words.values[i]!)!;

    const cols = {
      ids: new Float64Array(n),
      days: new Int32Array(n),
      keys: new Float64Array(n),
      status: new Uint8Array(n),
      voiv: new Uint16Array(n),
      legal: new Uint16Array(n),
      flags: new Uint8Array(n),
      city: new Uint32Array(n),
      postal: new Uint32Array(n),
    };
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
      const i = order[r]!;
      cols.ids[r] = ids[i]!;
      cols.days[r] = days[i]!;
      cols.keys[r] = keys[i]!;
      cols.status[r] = this.status.data[i]!;
      cols.voiv[r] = this.voiv.data[i]!;
      cols.legal[r] = this.legal.data[i]!;
      cols.flags[r] = this.flags.data[i]!;
      cols.city[r] = this.city.data[i]!;
      cols.postal[r] = this.postal.data[i]!;
      for (let j = srcCodeOff[i]!; j < srcCodeOff[i + 1]!; j++) codeValues[codeAt++] = srcCodes[j]!;
      codeOffsets[r + 1] = codeAt;
      for (let j = srcWordOff[i]!; j < srcWordOff[i + 1]!; j++) wordValues[wordAt++] = wordRemap[srcWords[j]!]!;
      wordOffsets[r + 1] = wordAt;
    }
    return new SearchIndex({
      n, ...cols,
      codes: { offsets: codeOffsets, values: codeValues },
      words: { offsets: wordOffsets, values: wordValues },
      voivodeships: this.voivodeships.ids,
      legalForms: this.legalForms.ids,
      cities: this.cities.ids,
      codeIds: this.codes.ids,
      sortedWords,
    });
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

/** A query made concrete against this index's dictionaries: -1 where the value is unknown (no main row matches). */
interface Plan {
  status: number;
  flag: number;
  voiv: number;
  legal: number;
  city: number;
  postal: number;
  codeMask: Uint8Array | null;
  wordRanges: [number, number][];
  lo: number;
  hi: number;
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

export class SearchIndex {
  private readonly p: IndexParts;
  private cityPostings: Postings | null = null;
  private postalPostings: Postings | null = null;
  private codePostings: Postings | null = null;
  private wordPostings: Postings | null = null;
  /** Main rows replaced by the delta. */
  private readonly masked: Uint8Array;
  private maskedCount = 0;
  private readonly delta = new Map<string, DeltaRow>();
  /** Rows without an activity start begin here (they sort last). */
  private readonly firstUndated: number;

  constructor(parts: IndexParts) {
    this.p = parts;
    this.masked = new Uint8Array(parts.n);
    let lo = 0;
    let hi = parts.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (parts.days[mid]! !== NO_DAY) lo = mid + 1;
      else hi = mid;
    }
    this.firstUndated = lo;
    this.buildPostings();
  }

  static fromRows(rows: Iterable<IndexRow>): SearchIndex {
    const b = new SearchIndexBuilder();
    for (const r of rows) b.add(r);
    return b.build();
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
    const arrays = [p.ids, p.days, p.keys, p.status, p.voiv, p.legal, p.flags, p.city, p.postal, p.codes.offsets, p.codes.values, p.words.offsets, p.words.values, this.masked];
    for (const ps of [this.cityPostings, this.postalPostings, this.codePostings, this.wordPostings]) if (ps) arrays.push(ps.offsets, ps.rows);
    return arrays.reduce((n, a) => n + a.byteLength, 0);
  }

  private buildPostings(): void {
    const p = this.p;
    this.cityPostings = postingsOf(p.cities.size + 1, p.n, (r, emit) => { if (p.city[r]! !== 0) emit(p.city[r]!); });
    this.postalPostings = postingsOf(100_001, p.n, (r, emit) => { if (p.postal[r]! !== 0) emit(p.postal[r]!); });
    this.codePostings = postingsOf(p.codeIds.size + 1, p.n, (r, emit) => {
      for (let j = p.codes.offsets[r]!; j < p.codes.offsets[r + 1]!; j++) emit(p.codes.values[j]!);
    });
    this.wordPostings = postingsOf(p.sortedWords.length, p.n, (r, emit) => {
      for (let j = p.words.offsets[r]!; j < p.words.offsets[r + 1]!; j++) emit(p.words.values[j]!);
    });
  }

  /** Replaces (or adds) one company: its main row, if any, is masked and the new row kept in the delta. */
  upsert(row: IndexRow): void {
    this.maskMain(Number(row.id));
    this.delta.set(row.id, { row, day: dayOf(row.activityStart), key: identifierKey(row.primaryIdentifier), id: Number(row.id) });
  }

  private maskMain(id: number): void {
    // A linear scan: upserts are rare (imports between rebuilds) and an id map would double the memory.
    const ids = this.p.ids;
    for (let r = 0; r < this.p.n; r++) {
      if (ids[r] === id) {
        if (this.masked[r] === 0) {
          this.masked[r] = 1;
          this.maskedCount++;
        }
        return;
      }
    }
  }

  private plan(f: SearchFilters): Plan {
    const p = this.p;
    const plan: Plan = {
      status: STATUS_CODE[f.status], flag: f.hasContact ? CONTACT_FLAG[f.hasContact] : 0,
      voiv: 0, legal: 0, city: 0, postal: 0, codeMask: null, wordRanges: [], lo: 0, hi: p.n, impossible: false,
    };
    const known = (map: ReadonlyMap<string, number>, v: string | null) => {
      if (v === null) return 0;
      const id = map.get(v);
      if (id === undefined) plan.impossible = true;
      return id ?? -1;
    };
    plan.voiv = known(p.voivodeships, f.voivodeship);
    plan.legal = known(p.legalForms, f.legalForm);
    plan.city = known(p.cities, f.city);
    if (f.postalCode !== null) plan.postal = Number(f.postalCode) + 1;

    if (f.activityCodes.length > 0 || f.activityPrefix !== null) {
      // Codes and a prefix both given: a company needs one of the codes and one code with the
      // prefix (not necessarily the same), so they stay two checks; the mask serves the codes.
      const mask = new Uint8Array(p.codeIds.size + 1);
      let any = false;
      if (f.activityCodes.length > 0) {
        for (const c of f.activityCodes) {
          const id = p.codeIds.get(c);
          if (id !== undefined) { mask[id] = 1; any = true; }
        }
      } else {
        for (const [c, id] of p.codeIds) if (c.startsWith(f.activityPrefix!)) { mask[id] = 1; any = true; }
      }
      if (!any) plan.impossible = true;
      plan.codeMask = mask;
    }
    for (const w of f.nameWords) {
      const a = lowerBound(p.sortedWords, w);
      const b = lowerBound(p.sortedWords, `${w}\uffff`);
      if (a === b) plan.impossible = true;
      plan.wordRanges.push([a, b]);
    }

    if (f.activityStartFrom !== null || f.activityStartTo !== null) {
      // Rows are in descending day order: the bounds select one contiguous slice.
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
   * The candidate rows: the smallest posting list (or union of lists) when it is clearly
   * smaller than the slice of rows the date bounds leave, else null (scan the slice).
   */
  private candidates(f: SearchFilters, plan: Plan): Uint32Array | null {
    const options: { size: number; rows: () => Uint32Array }[] = [];
    const list = (ps: Postings, k: number) => ps.rows.subarray(ps.offsets[k]!, ps.offsets[k + 1]!);
    const union = (ps: Postings, keys: Iterable<number>) => {
      const parts: Uint32Array[] = [];
      let size = 0;
      for (const k of keys) {
        const l = list(ps, k);
        if (l.length > 0) { parts.push(l); size += l.length; }
      }
      return { size, rows: () => {
        if (parts.length === 1) return parts[0]!;
        const all = new Uint32Array(size);
        let at = 0;
        for (const l of parts) { all.set(l, at); at += l.length; }
        all.sort();
        let w = 0;
        for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) all[w++] = all[i]!;
        return all.subarray(0, w);
      } };
    };
    if (plan.city > 0) options.push({ size: list(this.cityPostings!, plan.city).length, rows: () => list(this.cityPostings!, plan.city) });
    if (plan.postal > 0 && plan.postal <= 100_000) options.push({ size: list(this.postalPostings!, plan.postal).length, rows: () => list(this.postalPostings!, plan.postal) });
    if (plan.codeMask) {
      const keys: number[] = [];
      for (let k = 1; k < plan.codeMask.length; k++) if (plan.codeMask[k]) keys.push(k);
      options.push(union(this.codePostings!, keys));
    }
    if (f.activityCodes.length > 0 && f.activityPrefix !== null) {
      const keys: number[] = [];
      for (const [c, id] of this.p.codeIds) if (c.startsWith(f.activityPrefix)) keys.push(id);
      options.push(union(this.codePostings!, keys));
    }
    for (const [a, b] of plan.wordRanges) {
      const ps = this.wordPostings!;
      const size = ps.offsets[b]! - ps.offsets[a]!;
      options.push({ size, rows: () => {
        const range = Array.from({ length: b - a }, (_, i) => a + i);
        return union(ps, range).rows();
      } });
    }
    if (options.length === 0) return null;
    options.sort((x, y) => x.size - y.size);
    const best = options[0]!;
    if (best.size * 3 > plan.hi - plan.lo) return null;
    return best.rows();
  }

  /** Total matches and the company ids of rows [offset, offset + limit) in result order. */
  query(f: SearchFilters, offset: number, limit: number): IndexAnswer {
    const p = this.p;
    const plan = this.plan(f);
    const deltaMatches = [...this.delta.values()].filter((d) => rowMatches(d.row, f)).sort(compareRows);
    const ids: string[] = [];
    let position = 0;
    let j = 0;
    const emit = (id: number | string) => {
      if (position >= offset && ids.length < limit) ids.push(String(id));
      position++;
    };

    if (!plan.impossible && plan.hi > plan.lo) {
      const { status, flags, voiv, legal, city, postal, days, keys } = p;
      const codeOff = p.codes.offsets;
      const codeVal = p.codes.values;
      const wordOff = p.words.offsets;
      const wordVal = p.words.values;
      const masked = this.masked;
      const hasMasked = this.maskedCount > 0;
      const s = plan.status;
      const flag = plan.flag;
      const pv = plan.voiv;
      const pl = plan.legal;
      const pc = plan.city;
      const pp = plan.postal;
      const codeMask = plan.codeMask;
      const prefix = f.activityCodes.length > 0 ? f.activityPrefix : null;
      const ranges = plan.wordRanges;
      const dm = deltaMatches;
      const codes = this.p.codeIds;
      let prefixMask: Uint8Array | null = null;
      if (prefix !== null) {
        prefixMask = new Uint8Array(codes.size + 1);
        for (const [c, id] of codes) if (c.startsWith(prefix)) prefixMask[id] = 1;
      }

      const visit = (r: number) => {
        if (status[r] !== s) return;
        if (flag !== 0 && (flags[r]! & flag) === 0) return;
        if (pv !== 0 && voiv[r] !== pv) return;
        if (pl !== 0 && legal[r] !== pl) return;
        if (pc !== 0 && city[r] !== pc) return;
        if (pp !== 0 && postal[r] !== pp) return;
        if (hasMasked && masked[r] !== 0) return;
        if (codeMask !== null) {
          let ok = false;
          for (let k = codeOff[r]!; k < codeOff[r + 1]!; k++) if (codeMask[codeVal[k]!] !== 0) { ok = true; break; }
          if (!ok) return;
        }
        if (prefixMask !== null) {
          let ok = false;
          for (let k = codeOff[r]!; k < codeOff[r + 1]!; k++) if (prefixMask[codeVal[k]!] !== 0) { ok = true; break; }
          if (!ok) return;
        }
        for (let q = 0; q < ranges.length; q++) {
          const a = ranges[q]![0];
          const b = ranges[q]![1];
          let ok = false;
          for (let k = wordOff[r]!; k < wordOff[r + 1]!; k++) {
            const w = wordVal[k]!;
            if (w >= a && w < b) { ok = true; break; }
          }
          if (!ok) return;
        }
        if (j < dm.length) {
          const here = { day: days[r]!, key: keys[r]!, id: p.ids[r]! };
          while (j < dm.length && compareRows(dm[j]!, here) < 0) emit(dm[j++]!.row.id);
        }
        emit(p.ids[r]!);
      };

      const rows = this.candidates(f, plan);
      if (rows === null) {
        for (let r = plan.lo; r < plan.hi; r++) visit(r);
      } else {
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!;
          if (r >= plan.lo && r < plan.hi) visit(r);
        }
      }
    }
    while (j < deltaMatches.length) emit(deltaMatches[j++]!.row.id);
    return { total: position, ids };
  }
}
