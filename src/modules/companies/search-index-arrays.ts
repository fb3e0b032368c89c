/** Typed-array building blocks of the search index (docs/search.md): growable columns, dictionaries, posting lists and their set operations. */

/** An append-only typed array that doubles when full. */
export class Growable<T extends Uint32Array | Float64Array> {
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
export const growableU32 = () => new Growable((n) => new Uint32Array(n));
export const growableF64 = () => new Growable((n) => new Float64Array(n));

/** Strings to small integers (1-based; 0 means none). */
export class Dictionary {
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
export interface Csr {
  offsets: Uint32Array;
  values: Uint32Array;
}

/** Posting lists: the (ascending) rows holding key k are `rows[offsets[k] .. offsets[k + 1])`. */
export interface Postings {
  offsets: Uint32Array;
  rows: Uint32Array;
}

/** Lets other work run during a long computation (a build in a serving process); no-op in tests. */
export type Pause = () => Promise<void> | void;
export const noPause: Pause = () => {};
/** Rows between pauses: a few milliseconds of work. */
export const SLICE = 1 << 16;

export async function postingsOf(
  keyCount: number,
  n: number,
  pause: Pause,
  keysOfRow: (r: number, emit: (k: number) => void) => void,
): Promise<Postings> {
  const counts = new Uint32Array(keyCount + 1);
  const count = (k: number) => {
    counts[k + 1]!++;
  };
  for (let r = 0; r < n; r++) {
    keysOfRow(r, count);
    if ((r & (SLICE - 1)) === SLICE - 1) await pause();
  }
  for (let k = 0; k < keyCount; k++) counts[k + 1]! += counts[k]!;
  const offsets = counts;
  const fill = offsets.slice(0, keyCount);
  const rows = new Uint32Array(offsets[keyCount]!);
  let row = 0;
  const put = (k: number) => {
    rows[fill[k]!++] = row;
  };
  for (let r = 0; r < n; r++) {
    row = r;
    keysOfRow(r, put);
    if ((r & (SLICE - 1)) === SLICE - 1) await pause();
  }
  return { offsets, rows };
}

/** The items of two sorted lists in one sorted list (ties: `a`'s first). */
export function mergeSorted<T>(a: readonly T[], b: readonly T[], compare: (a: T, b: T) => number): T[] {
  const out: T[] = new Array(a.length + b.length);
  let x = 0;
  let y = 0;
  let w = 0;
  while (x < a.length && y < b.length) out[w++] = compare(a[x]!, b[y]!) <= 0 ? a[x++]! : b[y++]!;
  while (x < a.length) out[w++] = a[x++]!;
  while (y < b.length) out[w++] = b[y++]!;
  return out;
}

/** Sorts in slices merged in pairs, pausing between steps, so a large sort never blocks for long. */
export async function sortSliced<T>(values: T[], compare: (a: T, b: T) => number, pause: Pause, slice = SLICE): Promise<T[]> {
  const runs: T[][] = [];
  for (let i = 0; i < values.length; i += slice) {
    runs.push(values.slice(i, i + slice).sort(compare));
    await pause();
  }
  let level = runs;
  while (level.length > 1) {
    const next: T[][] = [];
    for (let i = 0; i < level.length; i += 2) {
      const a = level[i]!;
      const b = level[i + 1];
      next.push(b ? mergeSorted(a, b, compare) : a);
      await pause();
    }
    level = next;
  }
  return level[0] ?? [];
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Sorts strings (code-unit order) without blocking for long: see sortSliced. */
export function sortStrings(values: string[], pause: Pause): Promise<string[]> {
  return sortSliced(values, byCodeUnits, pause);
}

/**
 * The index's name words, sorted, as one ASCII byte array (words hold only a-z and 0-9): typed
 * arrays cross from the build's worker thread without a copy, and a million strings would be
 * cloned one by one on the thread that receives them.
 */
export interface PackedWords {
  bytes: Uint8Array;
  /** Word i is bytes[offsets[i] .. offsets[i + 1]). */
  offsets: Uint32Array;
}

export function packWords(sorted: readonly string[]): PackedWords {
  let length = 0;
  for (const w of sorted) length += w.length;
  const bytes = new Uint8Array(length);
  const offsets = new Uint32Array(sorted.length + 1);
  let at = 0;
  for (let i = 0; i < sorted.length; i++) {
    const w = sorted[i]!;
    for (let j = 0; j < w.length; j++) bytes[at++] = w.charCodeAt(j);
    offsets[i + 1] = at;
  }
  return { bytes, offsets };
}

export function wordCount(words: PackedWords): number {
  return words.offsets.length - 1;
}

/** Compares word i with `w`, looking at no more than `limit` characters of word i. */
function compareWord(words: PackedWords, i: number, w: string, limit: number): number {
  const start = words.offsets[i]!;
  const length = Math.min(words.offsets[i + 1]! - start, limit);
  const n = Math.min(length, w.length);
  for (let j = 0; j < n; j++) {
    const d = words.bytes[start + j]! - w.charCodeAt(j);
    if (d !== 0) return d;
  }
  return length - w.length;
}

/** The words starting with `prefix` are words [a, b). */
export function wordRange(words: PackedWords, prefix: string): [number, number] {
  const search = (limit: number, strict: boolean) => {
    let lo = 0;
    let hi = wordCount(words);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareWord(words, mid, prefix, limit);
      if (c < 0 || (!strict && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // First word not below the prefix; first word whose first prefix.length characters are above it.
  return [search(Infinity, true), search(prefix.length, false)];
}

/** Main rows by company id: `ids` sorted, and the row of each. Built with the index, so a delta finds the rows it replaces at once. */
export interface IdLookup {
  ids: Float64Array;
  rows: Uint32Array;
}

export async function idLookupOf(ids: Float64Array, n: number, pause: Pause): Promise<IdLookup> {
  const sorted = ids.slice(0, n).sort();
  await pause();
  const rows = new Uint32Array(n);
  for (let r = 0; r < n; r++) {
    rows[lowerBoundNumber(sorted, ids[r]!)] = r;
    if ((r & (SLICE - 1)) === SLICE - 1) await pause();
  }
  return { ids: sorted, rows };
}

function lowerBoundNumber(values: Float64Array, v: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The main row of company `id`, or -1. */
export function rowOfId(lookup: IdLookup, id: number): number {
  const i = lowerBoundNumber(lookup.ids, id);
  return i < lookup.ids.length && lookup.ids[i] === id ? lookup.rows[i]! : -1;
}

export function mergeTwo(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let w = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) {
      out[w++] = x;
      i++;
    } else if (y < x) {
      out[w++] = y;
      j++;
    } else {
      out[w++] = x;
      i++;
      j++;
    }
  }
  while (i < a.length) out[w++] = a[i++]!;
  while (j < b.length) out[w++] = b[j++]!;
  return out.subarray(0, w);
}

/** Rows in both ascending lists. */
export function intersectTwo(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let w = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) i++;
    else if (y < x) j++;
    else {
      out[w++] = x;
      i++;
      j++;
    }
  }
  return out.subarray(0, w);
}

/**
 * Sorted, distinct rows of several ascending lists. Few lists are merged in pairs (linear in their
 * sizes per level); many (a short name-word prefix is the union of hundreds of words' lists) go
 * through a bitset of the `n` rows instead: linear in their sizes plus n / 32, whatever their number.
 */
export function unionOf(lists: Uint32Array[], n = 0): Uint32Array {
  if (lists.length === 0) return new Uint32Array(0);
  if (n > 0 && lists.length > 4) {
    let size = 0;
    for (const l of lists) size += l.length;
    if (size * Math.log2(lists.length) > n / 16) return unionByBits(lists, n, size);
  }
  let level = lists;
  while (level.length > 1) {
    const next: Uint32Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? mergeTwo(level[i]!, level[i + 1]!) : level[i]!);
    level = next;
  }
  return level[0]!;
}

/** unionOf through a bitset of `n` rows (`size`: the lists' summed length, an upper bound of the result). */
export function unionByBits(lists: readonly Uint32Array[], n: number, size: number): Uint32Array {
  const bits = new Int32Array((n + 31) >>> 5);
  for (const l of lists) {
    for (let i = 0; i < l.length; i++) {
      const r = l[i]!;
      bits[r >>> 5]! |= 1 << (r & 31);
    }
  }
  const out = new Uint32Array(size);
  let w = 0;
  for (let k = 0; k < bits.length; k++) {
    let b = bits[k]!;
    while (b !== 0) {
      const low = b & -b;
      out[w++] = (k << 5) + 31 - Math.clz32(low);
      b ^= low;
    }
  }
  return out.subarray(0, w);
}

/** The first index of ascending `rows` holding a value ≥ v. */
export function lowerBound(rows: Uint32Array, v: number, from = 0, to = rows.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
