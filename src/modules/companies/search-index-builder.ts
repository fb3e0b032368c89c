import { SearchIndex } from './search-index.ts';
import type { IndexRow } from './search-index-rows.ts';
import { STATUS_CODE, dayOf, identifierSortKey, nameWords, flagsOf, compareRows } from './search-index-rows.ts';
import { growableU32, growableF64, Dictionary, type Pause, noPause, SLICE, sortStrings, packWords } from './search-index-arrays.ts';
import type { IndexParts } from './search-index.ts';

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
    return SearchIndex.create(await this.buildParts(pause), pause);
  }

  /** The columns in result order, the name words sorted and the dictionaries: what the query side is made of. */
  async buildParts(pause: Pause = noPause): Promise<IndexParts> {
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
    return {
      n,
      ...cols,
      codes: { offsets: codeOffsets, values: codeValues },
      words: { offsets: wordOffsets, values: wordValues },
      voivodeships: this.voivodeships.ids,
      legalForms: this.legalForms.ids,
      cities: this.cities.ids,
      codeIds: this.codes.ids,
      sortedWords: packWords(sortedWords),
    };
  }
}

/** Builds an index of these rows (tests, benchmarks). */
export function searchIndexFromRows(rows: Iterable<IndexRow>, pause?: Pause): Promise<SearchIndex> {
  const b = new SearchIndexBuilder();
  for (const r of rows) b.add(r);
  return b.build(pause);
}
