import type { SearchFilters } from './filters.ts';
import { compareRows, deltaRowOf, rowMatches, type DeltaRow, type IndexRow } from './search-index-rows.ts';
import type { Histogram } from './search-index-derive.ts';
import { mergeSorted, noPause, rowOfId, sortSliced, type IdLookup, type Pause } from './search-index-arrays.ts';

/**
 * What changed since the main part of a search index was built: the main rows replaced (masked
 * out, and taken off the histogram) and the companies' current rows, in result order. An overlay
 * is never modified: applying changes makes a new one, so a query sees all of a change set or
 * none of it (docs/search.md, "Freshness").
 */

/** The main part's side of applying changes. */
export interface MainRows {
  lookup: IdLookup;
  /** Takes main row r off the histogram (every count it is in). */
  forget(r: number, histogram: Histogram): void;
}

/** Rows prepared (or sorted, or masked) between pauses: about a millisecond of work, a few on a loaded machine. */
const PREPARE_SLICE = 1024;

export class IndexOverlay {
  private constructor(
    readonly masked: Uint8Array,
    readonly maskedCount: number,
    /** The masked rows, ascending. */
    readonly maskedRows: Uint32Array,
    /** Never modified (a change copies the counts). */
    readonly histogram: Histogram,
    /** In result order. */
    readonly rows: readonly DeltaRow[],
  ) {}

  static empty(n: number, histogram: Histogram): IndexOverlay {
    return new IndexOverlay(new Uint8Array(n), 0, new Uint32Array(0), histogram, []);
  }

  /** The delta rows a query matches, in result order. */
  matching(f: SearchFilters): DeltaRow[] {
    const out: DeltaRow[] = [];
    for (const d of this.rows) if (rowMatches(d.row, f, d.words)) out.push(d);
    return out;
  }

  /** This overlay with `changes` applied (a company listed twice keeps its last row), pausing between slices of the work. */
  async with(changes: readonly IndexRow[], main: MainRows, pause: Pause = noPause): Promise<IndexOverlay> {
    const byId = new Map<number, DeltaRow>();
    for (let i = 0; i < changes.length; i++) {
      const d = deltaRowOf(changes[i]!);
      byId.set(d.id, d);
      if (i % PREPARE_SLICE === PREPARE_SLICE - 1) await pause();
    }
    const added = await sortSliced([...byId.values()], compareRows, pause, PREPARE_SLICE);

    // Everything below is built anew (this overlay is never modified), so it may pause too.
    const masked = this.masked.slice();
    const histogram: Histogram = { keys: this.histogram.keys, counts: this.histogram.counts.slice() };
    let maskedCount = this.maskedCount;
    const newlyMasked: number[] = [];
    for (let i = 0; i < added.length; i++) {
      if (i % PREPARE_SLICE === PREPARE_SLICE - 1) await pause();
      const d = added[i]!;
      const r = rowOfId(main.lookup, d.id);
      if (r < 0 || masked[r] !== 0) continue;
      masked[r] = 1;
      maskedCount++;
      newlyMasked.push(r);
      main.forget(r, histogram);
    }
    const maskedRows = new Uint32Array(this.maskedRows.length + newlyMasked.length);
    maskedRows.set(this.maskedRows);
    maskedRows.set(newlyMasked, this.maskedRows.length);
    maskedRows.sort();
    const kept = this.rows.filter((d) => !byId.has(d.id));
    await pause();
    return new IndexOverlay(masked, maskedCount, maskedRows, histogram, mergeSorted(kept, added, compareRows));
  }
}
