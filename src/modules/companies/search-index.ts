import type { SearchFilters } from './filters.ts';
import { type IndexRow, type IndexAnswer, compareRows } from './search-index-rows.ts';
import { type Pause, type Postings, noPause, intersectTwo, lowerBound, unionOf } from './search-index-arrays.ts';
import { IndexOverlay } from './search-index-delta.ts';
import {
  type IndexParts,
  type IndexDerived,
  deriveIndex,
  histogramKeysOf,
  histogramPosition,
  digitOf,
  HISTOGRAM_BITS,
  DIGIT_KEY,
} from './search-index-derive.ts';
import { type Plan, planQuery } from './search-index-plan.ts';

export type { IndexParts, IndexDerived } from './search-index-derive.ts';

/**
 * The search index's query side: the columns a build produced (search-index-builder.ts), posting
 * lists for the selective filters, and an overlay of companies changed since (runs and imports
 * applied as deltas, search-index-delta.ts). The rows' shape and order are in
 * search-index-rows.ts, the typed-array parts in search-index-arrays.ts, the parts and what is
 * derived from them in search-index-derive.ts, a search's plan in search-index-plan.ts.
 */

// Which checks a candidate list stands for (its rows are exactly the rows passing them).
const COVERS_CITY = 1;
const COVERS_POSTAL = 2;
const COVERS_CODES = 4;
const COVERS_PREFIX = 8;
/** Shifted by the name word's position in the plan. */
const COVERS_WORD = 16;

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
  /** Where each digit group of the histogram's keys starts: [0] every row, [d + 1] the rows with an activity code starting with d; [11] the end. */
  private readonly histogramStarts: Int32Array;

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
    const keys = this.overlay.histogram.keys;
    this.histogramStarts = Int32Array.from({ length: 12 }, (_, g) => histogramPosition(keys, g * DIGIT_KEY));
  }

  static async create(p: IndexParts, pause: Pause = noPause): Promise<SearchIndex> {
    return new SearchIndex(p, await SearchIndex.derive(p, pause), null);
  }

  /** An index of parts and what was derived from them elsewhere (a build's worker thread): no work on this thread. */
  static fromDerived(p: IndexParts, derived: IndexDerived): SearchIndex {
    return new SearchIndex(p, derived, null);
  }

  /** Derives the packed column, the posting lists and the id lookup, pausing every few milliseconds. */
  static derive(p: IndexParts, pause: Pause = noPause): Promise<IndexDerived> {
    return deriveIndex(p, pause);
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
            histogram.counts[histogramPosition(histogram.keys, key)]!--;
          }),
      },
      pause,
    );
    return new SearchIndex(this.p, this.derived, overlay);
  }

  private plan(f: SearchFilters): Plan {
    return planQuery(this.p, this.firstUndated, f);
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
    const merging = dm.length > 0;
    // Emits main row r in result order, after the delta rows that come before it.
    const emit = (r: number) => {
      if (merging) {
        const here = { day: p.days[r]!, key: p.keys[r]!, id: ids64[r]! };
        while (j < dm.length && compareRows(dm[j]!, here) < 0) {
          if (position >= offset && ids.length < limit) ids.push(dm[j]!.row.id);
          position++;
          j++;
        }
      }
      if (position >= offset && ids.length < limit) ids.push(String(ids64[r]!));
      position++;
    };

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
          emit(r);
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
            emit(r);
          }
          return position - j;
        };
        // Few matching rows: merging their lists costs less than scanning the slice to the page's end.
        const sparse = inSlice * inSlice < (offset + limit) * (hi - lo);
        if (digit < 0 || !plan.dated) {
          let mainTotal = 0;
          if (!plan.dated) {
            // The histogram counts (masked rows already taken off it, a one-digit prefix included).
            const { keys, counts } = this.overlay.histogram;
            const to = this.histogramStarts[digit + 2]!;
            // Within a digit group, bits 0-21 of a key are the packed value (`low` has no digit bits).
            for (let k = this.histogramStarts[digit + 1]!; k < to; k++) if ((keys[k]! & low) === wantLow) mainTotal += counts[k]!;
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
            emit(r);
          }
        } else {
          // One comparison a row.
          for (let r = lo; r < hi; r++) {
            if ((dims[r]! & mask) !== want || (masked !== null && masked[r] !== 0)) continue;
            emit(r);
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
          emit(r);
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
