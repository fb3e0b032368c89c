import { MatchIndex, STATUS_CODES, trigramsOf, type MatchIndexParts, type MatchRow } from './match-index.ts';

/**
 * Builds a MatchIndex from rows handed over in ascending `id` order (the order the registry's
 * rows are read in). Adding a row is cheap (its words become vocabulary ids in growable arrays);
 * `build` turns them into typed arrays, yielding between slices so a serving process keeps
 * answering while a million companies are indexed.
 */

const SLICE = 100_000;
/** Companies an index can hold: 2^24 (16.7 million), below the identifier key in a packed integer. */
const COMPANY_BITS = 24n;
const COMPANY_MASK = (1n << COMPANY_BITS) - 1n;

export class MatchIndexBuilder {
  private readonly ids: number[] = [];
  private readonly status: number[] = [];
  private readonly city: number[] = [];
  private readonly street: number[] = [];
  private readonly postal: number[] = [];
  private readonly tokenStart: number[] = [0];
  private readonly tokenIds: number[] = [];
  private readonly vocab: string[] = [];
  private readonly vocabIds = new Map<string, number>();
  private readonly places: string[] = [];
  private readonly placeIds = new Map<string, number>();
  private readonly keys: number[] = [];
  private readonly keyCompanies: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  private place(s: string | null): number {
    if (s === null) return -1;
    let id = this.placeIds.get(s);
    if (id === undefined) {
      id = this.places.length;
      this.places.push(s);
      this.placeIds.set(s, id);
    }
    return id;
  }

  add(row: MatchRow): void {
    const index = this.ids.length;
    if (index >= 2 ** Number(COMPANY_BITS)) throw new Error('match index: too many companies');
    if (index > 0 && row.id <= this.ids[index - 1]!)
      throw new Error(`match index: rows must come in ascending id order (${row.id} after ${this.ids[index - 1]})`);
    this.ids.push(row.id);
    this.status.push(STATUS_CODES.indexOf(row.status));
    this.city.push(this.place(row.city));
    this.street.push(this.place(row.street));
    this.postal.push(row.postal ?? -1);
    for (const t of row.tokens) {
      let id = this.vocabIds.get(t);
      if (id === undefined) {
        id = this.vocab.length;
        this.vocab.push(t);
        this.vocabIds.set(t, id);
      }
      this.tokenIds.push(id);
    }
    this.tokenStart.push(this.tokenIds.length);
    for (const k of row.identifierKeys) {
      this.keys.push(k);
      this.keyCompanies.push(index);
    }
  }

  async build(pause: () => Promise<void> = async () => {}): Promise<MatchIndex> {
    return new MatchIndex(await this.buildParts(pause));
  }

  /** The index's arrays and dictionaries, as `build` makes its MatchIndex of them (match-index-worker.ts sends them across threads). */
  async buildParts(pause: () => Promise<void> = async () => {}): Promise<MatchIndexParts> {
    const n = this.ids.length;
    const tokenStart = Int32Array.from(this.tokenStart);
    const tokenIds = Int32Array.from(this.tokenIds);
    this.tokenIds.length = 0;
    await pause();

    // Posting lists: a company listed once per distinct word, in index order.
    const v = this.vocab.length;
    const df = new Int32Array(v);
    const seen = new Int32Array(v).fill(-1);
    for (let c = 0; c < n; c++) {
      for (let i = tokenStart[c]!; i < tokenStart[c + 1]!; i++) {
        const t = tokenIds[i]!;
        if (seen[t] !== c) {
          seen[t] = c;
          df[t]!++;
        }
      }
      if (c % SLICE === SLICE - 1) await pause();
    }
    const postingStart = new Int32Array(v + 1);
    for (let t = 0; t < v; t++) postingStart[t + 1] = postingStart[t]! + df[t]!;
    const postings = new Int32Array(postingStart[v]!);
    const fill = postingStart.slice(0, v);
    seen.fill(-1);
    for (let c = 0; c < n; c++) {
      for (let i = tokenStart[c]!; i < tokenStart[c + 1]!; i++) {
        const t = tokenIds[i]!;
        if (seen[t] !== c) {
          seen[t] = c;
          postings[fill[t]!++] = c;
        }
      }
      if (c % SLICE === SLICE - 1) await pause();
    }
    await pause();

    // Trigrams of the vocabulary (not of companies): typo lookups scan words, not the registry.
    const trigramIds = new Map<string, number>();
    const gramLists: number[][] = [];
    for (let t = 0; t < v; t++) {
      if (t % SLICE === SLICE - 1) await pause();
      for (const g of new Set(trigramsOf(this.vocab[t]!))) {
        let gid = trigramIds.get(g);
        if (gid === undefined) {
          gid = gramLists.length;
          trigramIds.set(g, gid);
          gramLists.push([]);
        }
        gramLists[gid]!.push(t);
      }
    }
    const trigramStart = new Int32Array(gramLists.length + 1);
    for (let g = 0; g < gramLists.length; g++) trigramStart[g + 1] = trigramStart[g]! + gramLists[g]!.length;
    const trigramTokens = new Int32Array(trigramStart[gramLists.length]!);
    for (let g = 0; g < gramLists.length; g++) trigramTokens.set(gramLists[g]!, trigramStart[g]!);
    await pause();

    // Identifier keys sorted, each with its company: packed into one 64-bit integer each (key
    // above, company below) so that the sort is the engine's native one, not a comparator called
    // some sixty million times on a serving process's only thread.
    const packed = new BigInt64Array(this.keys.length);
    for (let i = 0; i < packed.length; i++) {
      packed[i] = (BigInt(this.keys[i]!) << COMPANY_BITS) | BigInt(this.keyCompanies[i]!);
      if (i % SLICE === SLICE - 1) await pause();
    }
    packed.sort();
    await pause();
    const identifierKeys = new Float64Array(packed.length);
    const identifierCompanies = new Int32Array(packed.length);
    for (let i = 0; i < packed.length; i++) {
      identifierKeys[i] = Number(packed[i]! >> COMPANY_BITS);
      identifierCompanies[i] = Number(packed[i]! & COMPANY_MASK);
      if (i % SLICE === SLICE - 1) await pause();
    }
    await pause();

    return {
      ids: Float64Array.from(this.ids),
      status: Uint8Array.from(this.status),
      city: Int32Array.from(this.city),
      street: Int32Array.from(this.street),
      postal: Int32Array.from(this.postal),
      tokenStart,
      tokenIds,
      vocab: this.vocab,
      vocabIds: this.vocabIds,
      df,
      postingStart,
      postings,
      places: this.places,
      placeIds: this.placeIds,
      identifierKeys,
      identifierCompanies,
      trigramIds,
      trigramStart,
      trigramTokens,
    };
  }
}
