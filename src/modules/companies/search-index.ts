import { isStoredPostalCode, type SearchFilters } from './filters.ts';
import { type IndexRow, type IndexAnswer, STATUS_CODE, NO_DAY, dayOf, CONTACT_FLAG, compareRows } from './search-index-rows.ts';
import {
  type Csr,
  type IdLookup,
  type PackedWords,
  type Pause,
  type Postings,
  noPause,
  SLICE,
  postingsOf,
  intersectTwo,
  lowerBound,
  unionOf,
  idLookupOf,
  wordRange,
  wordCount,
} from './search-index-arrays.ts';
import { IndexOverlay } from './search-index-delta.ts';
/**
 * The search index's query side: the columns a build produced (search-index-builder.ts), posting
 * lists for the selective filters, and an overlay of companies changed since (runs and imports
 * applied as deltas, search-index-delta.ts). The rows' shape and order are in
 * search-index-rows.ts, the typed-array parts in search-index-arrays.ts.
 */

/** Everything a build hands the query side. */
export interface IndexParts {
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
  sortedWords: PackedWords;
}

/** What SearchIndex.derive works out from the parts: the packed column, the histogram, the posting lists and the id lookup. */
export interface IndexDerived {
  dims: Int32Array;
  histogram: Map<number, number>;
  prefix2Ids: Map<string, number>;
  firstUndated: number;
  city: Postings;
  postal: Postings;
  code: Postings;
  prefix2: Postings;
  word: Postings;
  /** The distinct packed values (bits 0-21) of the rows, ascending, and the rows of each (`packedRows` keyed by index in `packedKeys`). */
  packedKeys: Int32Array;
  packedRows: Postings;
  lookup: IdLookup;
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
// The histogram counts every row under its packed bits 0-21, and once more under
// `packed + (d + 1) * DIGIT_KEY` for each first digit d of its activity codes, so that a
// one-digit activity prefix is counted without visiting rows too.
const DIGIT_KEY = 1 << DIGITS_SHIFT;

/** Calls `emit` with every histogram key main row `dims` is counted under. */
function histogramKeysOf(dims: number, emit: (key: number) => void): void {
  const packed = dims & HISTOGRAM_BITS;
  emit(packed);
  for (let digits = dims >>> DIGITS_SHIFT, d = 0; digits !== 0; digits >>>= 1, d++) if (digits & 1) emit(packed + (d + 1) * DIGIT_KEY);
}

/** The digit of the one-digit activity prefix a packed mask asks for, or -1. */
function digitOf(mask: number): number {
  const digits = mask >>> DIGITS_SHIFT;
  return digits === 0 ? -1 : 31 - Math.clz32(digits);
}

// Which checks a candidate list stands for (its rows are exactly the rows passing them).
const COVERS_CITY = 1;
const COVERS_POSTAL = 2;
const COVERS_CODES = 4;
const COVERS_PREFIX = 8;
/** Shifted by the name word's position in the plan. */
const COVERS_WORD = 16;

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

export class SearchIndex {
  private readonly p: IndexParts;
  private readonly derived: IndexDerived;
  private readonly dims: Int32Array;
  private readonly cityPostings: Postings;
  private readonly postalPostings: Postings;
  private readonly codePostings: Postings;
  /** Rows by the first two characters of any of their codes (an activity prefix of two). */
  private readonly prefix2Postings: Postings;
  private readonly prefix2Ids: Map<string, number>;
  private readonly wordPostings: Postings;
  /** Main rows replaced since the build, the histogram without them, and the rows that replace them. */
  private readonly overlay: IndexOverlay;
  /** Rows without an activity start begin here (they sort last). */
  private readonly firstUndated: number;
  /** The overlay's histogram split by digit key: [0] every row, [d + 1] the rows with an activity code starting with d. */
  private readonly histograms: Map<number, number>[];

  private constructor(parts: IndexParts, derived: IndexDerived, overlay: IndexOverlay | null) {
    this.p = parts;
    this.derived = derived;
    this.overlay = overlay ?? IndexOverlay.empty(parts.n, derived.histogram);
    this.dims = derived.dims;
    this.prefix2Ids = derived.prefix2Ids;
    this.firstUndated = derived.firstUndated;
    this.cityPostings = derived.city;
    this.postalPostings = derived.postal;
    this.codePostings = derived.code;
    this.prefix2Postings = derived.prefix2;
    this.wordPostings = derived.word;
    this.histograms = Array.from({ length: 11 }, () => new Map<number, number>());
    for (const [key, count] of this.overlay.histogram) this.histograms[Math.floor(key / DIGIT_KEY)]!.set(key & HISTOGRAM_BITS, count);
  }

  static async create(p: IndexParts, pause: Pause = noPause): Promise<SearchIndex> {
    return new SearchIndex(p, await SearchIndex.derive(p, pause), null);
  }

  /** An index of parts and what was derived from them elsewhere (a build's worker thread): no work on this thread. */
  static fromDerived(p: IndexParts, derived: IndexDerived): SearchIndex {
    return new SearchIndex(p, derived, null);
  }

  /** Derives the packed column, the posting lists and the id lookup, pausing every few milliseconds. */
  static async derive(p: IndexParts, pause: Pause = noPause): Promise<IndexDerived> {
    const dims = new Int32Array(p.n);
    const histogram = new Map<number, number>();
    const prefix2Ids = new Map<string, number>();
    const count = (key: number) => {
      histogram.set(key, (histogram.get(key) ?? 0) + 1);
    };
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
      const packed =
        p.status[r]! |
        (p.flags[r]! << 2) |
        (Math.min(p.voiv[r]!, VOIV_MAX) << VOIV_SHIFT) |
        (Math.min(p.legal[r]!, LEGAL_MAX) << LEGAL_SHIFT);
      let digits = 0;
      for (let j = p.codes.offsets[r]!; j < p.codes.offsets[r + 1]!; j++) digits |= codeFirstDigit[p.codes.values[j]!]!;
      dims[r] = packed | (digits << DIGITS_SHIFT);
      histogramKeysOf(dims[r]!, count);
      if ((r & (SLICE - 1)) === SLICE - 1) await pause();
    }
    let lo = 0;
    let hi = p.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p.days[mid]! !== NO_DAY) lo = mid + 1;
      else hi = mid;
    }
    const city = await postingsOf(p.cities.size + 1, p.n, pause, (r, emit) => {
      if (p.city[r]! !== 0) emit(p.city[r]!);
    });
    const postal = await postingsOf(100_001, p.n, pause, (r, emit) => {
      if (p.postal[r]! !== 0) emit(p.postal[r]!);
    });
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
    const word = await postingsOf(wordCount(p.sortedWords), p.n, pause, (r, emit) => {
      for (let j = p.words.offsets[r]!; j < p.words.offsets[r + 1]!; j++) emit(p.words.values[j]!);
    });
    const packedKeys = Int32Array.from([...histogram.keys()].filter((k) => k <= HISTOGRAM_BITS)).sort();
    const keyIndex = new Map<number, number>();
    for (let i = 0; i < packedKeys.length; i++) keyIndex.set(packedKeys[i]!, i);
    const packedRows = await postingsOf(packedKeys.length, p.n, pause, (r, emit) => emit(keyIndex.get(dims[r]! & HISTOGRAM_BITS)!));
    const lookup = await idLookupOf(p.ids, p.n, pause);
    return { dims, histogram, prefix2Ids, firstUndated: lo, city, postal, code, prefix2, word, packedKeys, packedRows, lookup };
  }

  /** The parts and what was derived from them (to hand the index to another thread). */
  get data(): { parts: IndexParts; derived: IndexDerived } {
    return { parts: this.p, derived: this.derived };
  }

  /** Companies in the index (main rows not replaced, plus the delta). */
  get size(): number {
    return this.p.n - this.overlay.maskedCount + this.overlay.rows.length;
  }

  get deltaSize(): number {
    return this.overlay.rows.length;
  }

  /** Bytes held by the typed arrays (the bulk of the index). */
  get byteSize(): number {
    const p = this.p;
    const arrays: ArrayBufferView[] = [
      p.ids,
      p.days,
      p.keys,
      p.status,
      p.voiv,
      p.legal,
      p.flags,
      p.city,
      p.postal,
      p.codes.offsets,
      p.codes.values,
      p.words.offsets,
      p.words.values,
      p.sortedWords.bytes,
      p.sortedWords.offsets,
      this.overlay.masked,
      this.dims,
      this.derived.lookup.ids,
      this.derived.lookup.rows,
    ];
    arrays.push(this.derived.packedKeys, this.overlay.maskedRows);
    for (const ps of [
      this.cityPostings,
      this.postalPostings,
      this.codePostings,
      this.prefix2Postings,
      this.wordPostings,
      this.derived.packedRows,
    ])
      arrays.push(ps.offsets, ps.rows);
    return arrays.reduce((n, a) => n + a.byteLength, 0);
  }

  /**
   * This index with these companies replaced (or added): their main rows masked, their rows in the
   * delta. A new index sharing this one's main part; this one is left as it was, so searches
   * running meanwhile see it whole.
   */
  async withChanges(rows: readonly IndexRow[], pause: Pause = noPause): Promise<SearchIndex> {
    const overlay = await this.overlay.with(
      rows,
      {
        lookup: this.derived.lookup,
        forget: (r, histogram) =>
          histogramKeysOf(this.dims[r]!, (key) => {
            histogram.set(key, histogram.get(key)! - 1);
          }),
      },
      pause,
    );
    return new SearchIndex(this.p, this.derived, overlay);
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
      mask: 3,
      want: STATUS_CODE[f.status],
      exactVoiv: 0,
      exactLegal: 0,
      city: 0,
      postal: 0,
      codeMask: null,
      prefixMask: null,
      wordRanges: [],
      lo: 0,
      hi: p.n,
      dated: false,
      impossible: false,
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
    if (f.postalCode !== null) {
      if (isStoredPostalCode(f.postalCode)) plan.postal = Number(f.postalCode) + 1;
      else plan.impossible = true;
    }

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
      const [a, b] = wordRange(p.sortedWords, w);
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
  private candidates(f: SearchFilters, plan: Plan): { rows: Uint32Array; covers: number } | null {
    const options: { size: number; covers: number; rows: () => Uint32Array }[] = [];
    const list = (ps: Postings, k: number) => ps.rows.subarray(ps.offsets[k]!, ps.offsets[k + 1]!);
    const ofMask = (mask: Uint8Array, covers: number) => {
      const lists: Uint32Array[] = [];
      let size = 0;
      for (let k = 1; k < mask.length; k++) {
        if (mask[k]) {
          const l = list(this.codePostings, k);
          lists.push(l);
          size += l.length;
        }
      }
      return { size, covers, rows: () => unionOf(lists, this.p.n) };
    };
    if (plan.city > 0) {
      const l = list(this.cityPostings, plan.city);
      options.push({ size: l.length, covers: COVERS_CITY, rows: () => l });
    }
    if (plan.postal > 0 && plan.postal <= 100_000) {
      const l = list(this.postalPostings, plan.postal);
      options.push({ size: l.length, covers: COVERS_POSTAL, rows: () => l });
    }
    const prefix = f.activityPrefix;
    // The prefix's codes are the plan's prefixMask when codes are given too, else its codeMask.
    const prefixCovers = f.activityCodes.length > 0 ? COVERS_PREFIX : COVERS_CODES;
    if (prefix !== null && prefix.length === 2) {
      const k = this.prefix2Ids.get(prefix);
      if (k !== undefined) {
        const l = list(this.prefix2Postings, k);
        options.push({ size: l.length, covers: prefixCovers, rows: () => l });
      }
    } else if (prefix !== null && prefix.length > 2) {
      const mask = plan.prefixMask ?? (f.activityCodes.length === 0 ? plan.codeMask : null);
      if (mask) options.push(ofMask(mask, prefixCovers));
    }
    if (f.activityCodes.length > 0 && plan.codeMask) options.push(ofMask(plan.codeMask, COVERS_CODES));
    plan.wordRanges.forEach(([a, b], q) => {
      const ps = this.wordPostings;
      options.push({
        size: ps.offsets[b]! - ps.offsets[a]!,
        covers: COVERS_WORD << q,
        rows: () =>
          unionOf(
            Array.from({ length: b - a }, (_, i) => list(ps, a + i)),
            this.p.n,
          ),
      });
    });
    // The rows of the packed values the query allows (a rare legal form with a contact type), within the slice.
    if ((plan.mask & ~3) !== 0) {
      const { packedKeys, packedRows } = this.derived;
      const low = plan.mask & HISTOGRAM_BITS;
      const wantLow = plan.want & HISTOGRAM_BITS;
      const lists: Uint32Array[] = [];
      let size = 0;
      for (let k = 0; k < packedKeys.length; k++) {
        if ((packedKeys[k]! & low) !== wantLow) continue;
        const a = packedRows.offsets[k]!;
        const b = packedRows.offsets[k + 1]!;
        const x = plan.dated ? lowerBound(packedRows.rows, plan.lo, a, b) : a;
        const y = plan.dated ? lowerBound(packedRows.rows, plan.hi, x, b) : b;
        if (y > x) {
          size += y - x;
          lists.push(packedRows.rows.subarray(x, y));
        }
      }
      options.push({ size, covers: 0, rows: () => unionOf(lists, this.p.n) });
    }
    if (options.length === 0) return null;
    options.sort((a, b) => a.size - b.size);
    const best = options[0]!;
    // Candidates skip the checks their lists stand for, and come from a bitset union when many
    // lists make them: worth it unless they are most of the slice.
    if (best.size * 2 > plan.hi - plan.lo) return null;
    // Two lists of similar size (a city and an activity): merging them is cheaper than checking
    // every row of the first against the second's column.
    const second = options[1];
    if (second !== undefined && second.size <= best.size * 10)
      return { rows: intersectTwo(best.rows(), second.rows()), covers: best.covers | second.covers };
    return { rows: best.rows(), covers: best.covers };
  }

  /** Total matches and the company ids of rows [offset, offset + limit) in result order. */
  query(f: SearchFilters, offset: number, limit: number): IndexAnswer {
    const p = this.p;
    const plan = this.plan(f);
    const dm = this.overlay.matching(f);
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
      const masked = this.overlay.maskedCount > 0 ? this.overlay.masked : null;
      const rowChecks =
        plan.city !== 0 ||
        plan.postal !== 0 ||
        plan.codeMask !== null ||
        plan.wordRanges.length > 0 ||
        plan.exactVoiv !== 0 ||
        plan.exactLegal !== 0;

      // Emits main rows from `from` on, in order, until the page is full; returns the main rows emitted.
      const pageFrom = (from: number, to: number): number => {
        const end = offset + limit;
        for (let r = from; r < to && position < end && ids.length < limit; r++) {
          if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
          if (merging) emitMerged(r);
          else {
            if (position >= offset) ids.push(String(ids64[r]!));
            position++;
          }
        }
        return position - j;
      };
      const low = mask & HISTOGRAM_BITS;
      const wantLow = want & HISTOGRAM_BITS;
      const digit = digitOf(mask);

      if (!rowChecks) {
        // Packed columns only, within the slice of rows the date bounds leave (all rows without).
        // The rows of each packed value are listed in order: two binary searches a matching
        // value count its rows in the slice, without visiting them.
        const lo = plan.dated ? plan.lo : 0;
        const hi = plan.dated ? plan.hi : p.n;
        const { packedKeys, packedRows } = this.derived;
        const lists: Uint32Array[] = [];
        let inSlice = 0;
        for (let k = 0; k < packedKeys.length; k++) {
          if ((packedKeys[k]! & low) !== wantLow) continue;
          const a = packedRows.offsets[k]!;
          const b = packedRows.offsets[k + 1]!;
          const x = plan.dated ? lowerBound(packedRows.rows, lo, a, b) : a;
          const y = plan.dated ? lowerBound(packedRows.rows, hi, x, b) : b;
          if (y > x) {
            inSlice += y - x;
            lists.push(packedRows.rows.subarray(x, y));
          }
        }
        // Emits main rows of ascending `rows` until the page is full; returns the main rows emitted.
        const pageOf = (rows: Uint32Array): number => {
          const end = offset + limit;
          for (let i = 0; i < rows.length && position < end && ids.length < limit; i++) {
            const r = rows[i]!;
            if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
            if (merging) emitMerged(r);
            else {
              if (position >= offset) ids.push(String(ids64[r]!));
              position++;
            }
          }
          return position - j;
        };
        // Few matching rows: merging their lists costs less than scanning the slice to the page's end.
        const sparse = inSlice * inSlice < (offset + limit) * (hi - lo);
        if (digit < 0 || !plan.dated) {
          let mainTotal = 0;
          if (!plan.dated) {
            // The histogram counts (masked rows already taken off it, a one-digit prefix included).
            for (const [packed, count] of this.histograms[digit + 1]!) if ((packed & low) === wantLow) mainTotal += count;
          } else {
            let maskedIn = 0;
            if (masked !== null) {
              const mr = this.overlay.maskedRows;
              for (let i = lowerBound(mr, lo); i < mr.length && mr[i]! < hi; i++) if ((dims[mr[i]!]! & mask) === want) maskedIn++;
            }
            mainTotal = inSlice - maskedIn;
          }
          // Every main match before the page's end is emitted; the rest are counted, not visited.
          const emittedMain = sparse ? pageOf(unionOf(lists, p.n)) : pageFrom(lo, hi);
          position += mainTotal - emittedMain;
        } else if (inSlice * 4 < hi - lo) {
          // Dates and a one-digit prefix, few rows of the matching packed values in the slice: those rows are the candidates.
          const rows = unionOf(lists, p.n);
          for (let i = 0; i < rows.length; i++) {
            const r = rows[i]!;
            if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
            if (merging) emitMerged(r);
            else {
              if (position >= offset && ids.length < limit) ids.push(String(ids64[r]!));
              position++;
            }
          }
        } else {
          // One comparison a row.
          for (let r = lo; r < hi; r++) {
            if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
            if (merging) emitMerged(r);
            else {
              if (position >= offset && ids.length < limit) ids.push(String(ids64[r]!));
              position++;
            }
          }
        }
      } else {
        const { city, postal, voiv, legal } = p;
        const codeOff = p.codes.offsets;
        const codeVal = p.codes.values;
        const wordOff = p.words.offsets;
        const wordVal = p.words.values;
        const { exactVoiv, exactLegal } = plan;
        const chosen = this.candidates(f, plan);
        const rows = chosen?.rows ?? null;
        // What the candidates' lists stand for is not checked again.
        const covers = chosen?.covers ?? 0;
        const pc = covers & COVERS_CITY ? 0 : plan.city;
        const pp = covers & COVERS_POSTAL ? 0 : plan.postal;
        const codeMask = covers & COVERS_CODES ? null : plan.codeMask;
        const prefixMask = covers & COVERS_PREFIX ? null : plan.prefixMask;
        const wordRanges = plan.wordRanges.filter((_, q) => (covers & (COVERS_WORD << q)) === 0);
        const passes = (r: number): boolean => {
          if ((dims[r]! & mask) !== want) return false;
          if (pc !== 0 && city[r] !== pc) return false;
          if (pp !== 0 && postal[r] !== pp) return false;
          if (masked !== null && masked[r] !== 0) return false;
          if (exactVoiv !== 0 && voiv[r] !== exactVoiv) return false;
          if (exactLegal !== 0 && legal[r] !== exactLegal) return false;
          if (codeMask !== null) {
            let ok = false;
            for (let k = codeOff[r]!, e = codeOff[r + 1]!; k < e; k++)
              if (codeMask[codeVal[k]!] !== 0) {
                ok = true;
                break;
              }
            if (!ok) return false;
          }
          if (prefixMask !== null) {
            let ok = false;
            for (let k = codeOff[r]!, e = codeOff[r + 1]!; k < e; k++)
              if (prefixMask[codeVal[k]!] !== 0) {
                ok = true;
                break;
              }
            if (!ok) return false;
          }
          for (let q = 0; q < wordRanges.length; q++) {
            const a = wordRanges[q]![0];
            const b = wordRanges[q]![1];
            let ok = false;
            for (let k = wordOff[r]!, e = wordOff[r + 1]!; k < e; k++) {
              const w = wordVal[k]!;
              if (w >= a && w < b) {
                ok = true;
                break;
              }
            }
            if (!ok) return false;
          }
          return true;
        };
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
