import { NO_DAY } from './search-index-rows.ts';
import {
  type Csr,
  type IdLookup,
  type PackedWords,
  type Pause,
  type Postings,
  noPause,
  SLICE,
  postingsOf,
  idLookupOf,
  wordCount,
} from './search-index-arrays.ts';

/**
 * What a search index is made of: the columns a build produces (IndexParts), and what is derived
 * from them once, in the build's worker thread or between requests (IndexDerived): the packed
 * low-cardinality column, its histogram, the posting lists and the id lookup. The query side is
 * search-index.ts.
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
  histogram: Histogram;
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
export const VOIV_SHIFT = 5;
export const VOIV_MAX = 127;
export const LEGAL_SHIFT = 12;
export const LEGAL_MAX = 1023;
export const DIGITS_SHIFT = 22;
export const HISTOGRAM_BITS = (1 << DIGITS_SHIFT) - 1;
// The histogram counts every row under its packed bits 0-21, and once more under
// `packed + (d + 1) * DIGIT_KEY` for each first digit d of its activity codes, so that a
// one-digit activity prefix is counted without visiting rows too.
export const DIGIT_KEY = 1 << DIGITS_SHIFT;

/**
 * Main rows counted by histogram key, the keys ascending: typed arrays, not a Map of 100,000s of
 * entries, so a build's worker hands it over by transfer and the serving thread's heap holds (and
 * a delta copies) no object per key. The keys of digit group g (0: every row; d + 1: rows with an
 * activity code starting with d) are the run from g * DIGIT_KEY on.
 */
export interface Histogram {
  keys: Int32Array;
  counts: Int32Array;
}

export function histogramOf(counts: ReadonlyMap<number, number>): Histogram {
  const keys = Int32Array.from(counts.keys()).sort();
  return { keys, counts: Int32Array.from(keys, (k) => counts.get(k)!) };
}

/** The position of `key` in the histogram's keys (the first key at or past it). */
export function histogramPosition(keys: Int32Array, key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Calls `emit` with every histogram key main row `dims` is counted under. */
export function histogramKeysOf(dims: number, emit: (key: number) => void): void {
  const packed = dims & HISTOGRAM_BITS;
  emit(packed);
  for (let digits = dims >>> DIGITS_SHIFT, d = 0; digits !== 0; digits >>>= 1, d++) if (digits & 1) emit(packed + (d + 1) * DIGIT_KEY);
}

/** The digit of the one-digit activity prefix a packed mask asks for, or -1. */
export function digitOf(mask: number): number {
  const digits = mask >>> DIGITS_SHIFT;
  return digits === 0 ? -1 : 31 - Math.clz32(digits);
}

/** Derives the packed column, the posting lists and the id lookup, pausing every few milliseconds. */
export async function deriveIndex(p: IndexParts, pause: Pause = noPause): Promise<IndexDerived> {
  const dims = new Int32Array(p.n);
  const counted = new Map<number, number>();
  const prefix2Ids = new Map<string, number>();
  const count = (key: number) => {
    counted.set(key, (counted.get(key) ?? 0) + 1);
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
  const histogram = histogramOf(counted);
  // Group 0 of the histogram's keys: every packed value that occurs.
  const packedKeys = histogram.keys.slice(0, histogramPosition(histogram.keys, DIGIT_KEY));
  const keyIndex = new Map<number, number>();
  for (let i = 0; i < packedKeys.length; i++) keyIndex.set(packedKeys[i]!, i);
  const packedRows = await postingsOf(packedKeys.length, p.n, pause, (r, emit) => emit(keyIndex.get(dims[r]! & HISTOGRAM_BITS)!));
  const lookup = await idLookupOf(p.ids, p.n, pause);
  return { dims, histogram, prefix2Ids, firstUndated: lo, city, postal, code, prefix2, word, packedKeys, packedRows, lookup };
}
