import type { CompanyStatus } from '../../registry/model.ts';
import { allowedTypos, editDistanceWithin } from './normalize.ts';

/**
 * The matcher's own compact in-memory index (docs/match.md, "Index"): per company its name
 * tokens, city, street and postal code keys and status in typed arrays; a posting list per name
 * token; a trigram index over the token vocabulary for typo lookups; the identifiers as a sorted
 * array of keys. Companies are held in `companies.id` order, so a company is found by id with a
 * binary search and no map of a million entries.
 *
 * On-demand imports arrive as a delta (`upsert`): the company's old entry is marked dead and its
 * new state kept in a small list scanned beside the arrays; a rebuild folds the delta in. The
 * delta is answered as a rebuild would answer it: its words have posting lists of their own
 * (`extrasHolding`), are found as misspellings by the same trigram rule as the vocabulary's, and
 * every word's document frequency counts the companies live now (dead entries out, the delta in).
 */

/** A company as the scorer sees it. */
export interface MatchCandidate {
  /** companies.id */
  id: number;
  status: CompanyStatus;
  /** nameTokens() of its name. */
  tokens: readonly string[];
  city: string | null;
  street: string | null;
  postal: number | null;
}

/** A company as the index is built from it. */
export interface MatchRow extends MatchCandidate {
  /** identifierKey() of each identifier, as numbers. */
  identifierKeys: readonly number[];
}

export const STATUS_CODES: readonly CompanyStatus[] = ['ACTIVE', 'SUSPENDED', 'DELETED'];

export interface MatchIndexParts {
  ids: Float64Array;
  status: Uint8Array;
  city: Int32Array;
  street: Int32Array;
  postal: Int32Array;
  tokenStart: Int32Array;
  tokenIds: Int32Array;
  vocab: string[];
  vocabIds: Map<string, number>;
  df: Int32Array;
  postingStart: Int32Array;
  postings: Int32Array;
  places: string[];
  placeIds: Map<string, number>;
  identifierKeys: Float64Array;
  identifierCompanies: Int32Array;
  trigramIds: Map<string, number>;
  trigramStart: Int32Array;
  trigramTokens: Int32Array;
}

export function trigramsOf(token: string): string[] {
  const padded = `$${token}$`;
  const out: string[] = [];
  for (let i = 0; i + 3 <= padded.length; i++) out.push(padded.slice(i, i + 3));
  return out;
}

function lowerBound(a: Float64Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface TokenVariant {
  token: string;
  /** Vocabulary id; -1 for a word only the delta holds. */
  id: number;
  distance: number;
}

export class MatchIndex {
  readonly size: number;
  private readonly dead: Uint8Array;
  private deadCount = 0;
  /** Imported since the build, by companies.id. */
  private readonly extras = new Map<number, MatchRow>();
  /** The delta's companies (companies.id) by identifier key. */
  private readonly extraByKey = new Map<number, number[]>();
  /** Change of each word's document frequency since the build: dead entries' words -1, the delta's +1. */
  private readonly dfChange = new Map<string, number>();
  /** The delta by slot, and each of its words' slots (built on first use after a change). */
  private extraRows: MatchRow[] | null = null;
  private extraPostings: Map<string, number[]> | null = null;
  private extraWords: { word: string; grams: string[] }[] | null = null;
  private readonly counter: Uint16Array;
  private readonly touched: number[] = [];
  private readonly variantCache = new Map<string, TokenVariant[]>();

  constructor(private readonly p: MatchIndexParts) {
    this.size = p.ids.length;
    this.dead = new Uint8Array(this.size);
    this.counter = new Uint16Array(p.vocab.length);
  }

  /** Live companies: the built ones not replaced, plus the delta. */
  get companies(): number {
    return this.size - this.deadCount + this.extras.size;
  }

  get deltaSize(): number {
    return this.extras.size;
  }

  get byteSize(): number {
    const p = this.p;
    return [
      p.ids,
      p.status,
      p.city,
      p.street,
      p.postal,
      p.tokenStart,
      p.tokenIds,
      p.df,
      p.postingStart,
      p.postings,
      p.identifierKeys,
      p.identifierCompanies,
      p.trigramStart,
      p.trigramTokens,
    ].reduce((n, a) => n + a.byteLength, 0);
  }

  /** Inverse document frequency of a word: rare words weigh more. Unknown words weigh as the rarest. */
  weightOf(token: string): number {
    const df = Math.max(1, this.frequencyOf(token));
    return Math.log(1 + Math.max(1, this.companies) / df);
  }

  tokenId(token: string): number {
    return this.p.vocabIds.get(token) ?? -1;
  }

  /** Live companies holding the word: built ones not replaced, plus the delta's (as a rebuild would count them). */
  frequencyOf(token: string): number {
    const id = this.p.vocabIds.get(token);
    return (id === undefined ? 0 : this.p.df[id]!) + (this.dfChange.get(token) ?? 0);
  }

  /** frequencyOf the vocabulary's word `id`. */
  documentFrequency(id: number): number {
    return this.p.df[id]! + (this.dfChange.size === 0 ? 0 : (this.dfChange.get(this.p.vocab[id]!) ?? 0));
  }

  /** companies.id of a built company. */
  idOf(index: number): number {
    return this.p.ids[index]!;
  }

  /** Built companies holding the word (indexes into the arrays; dead ones included, filter with isLive). */
  postingsOf(id: number): Int32Array {
    return this.p.postings.subarray(this.p.postingStart[id]!, this.p.postingStart[id + 1]!);
  }

  /** Id of a city or street key in the index's dictionary; -1 when no company has it. */
  placeId(key: string): number {
    return this.p.placeIds.get(key) ?? -1;
  }

  cityIdOf(index: number): number {
    return this.p.city[index]!;
  }

  postalOf(index: number): number | null {
    const v = this.p.postal[index]!;
    return v < 0 ? null : v;
  }

  tokenCount(index: number): number {
    return this.p.tokenStart[index + 1]! - this.p.tokenStart[index]!;
  }

  isLive(index: number): boolean {
    return this.dead[index] === 0;
  }

  /**
   * The words within allowedTypos of `token` (itself included when known) that live companies
   * hold, nearest first: the vocabulary's and the delta's, by one rule. Candidates come from
   * shared trigrams: one edit changes at most three of a word's trigrams, and a transposition
   * four, so a word `k` edits away shares at least `len - 4k` of them.
   */
  variantsOf(token: string): TokenVariant[] {
    const cached = this.variantCache.get(token);
    if (cached) return cached;
    const p = this.p;
    const out: TokenVariant[] = [];
    const exact = p.vocabIds.get(token);
    // A word only dead entries hold is one a rebuild would not know.
    if (this.frequencyOf(token) > 0) out.push({ token, id: exact ?? -1, distance: 0 });
    const k = allowedTypos(token.length);
    if (k > 0) {
      const all = trigramsOf(token);
      const grams = new Set(all);
      const need = Math.max(1, all.length - 4 * k);
      const { counter, touched } = this;
      for (const g of grams) {
        const gid = p.trigramIds.get(g);
        if (gid === undefined) continue;
        for (let i = p.trigramStart[gid]!, end = p.trigramStart[gid + 1]!; i < end; i++) {
          const t = p.trigramTokens[i]!;
          if (counter[t] === 0) touched.push(t);
          if (counter[t]! < 65535) counter[t]!++;
        }
      }
      const variant = (word: string, id: number) => {
        const bound = Math.min(k, allowedTypos(word.length));
        const d = editDistanceWithin(token, word, bound);
        if (d <= bound && (this.dfChange.size === 0 || this.frequencyOf(word) > 0)) out.push({ token: word, id, distance: d });
      };
      for (const t of touched) {
        if (counter[t]! >= need && t !== exact) variant(p.vocab[t]!, t);
        counter[t] = 0;
      }
      touched.length = 0;
      // The delta's own words, by the vocabulary's rule: shared trigrams, then the distance.
      if (this.extras.size > 0)
        for (const { word, grams: its } of this.extraOnlyWords()) {
          if (word === token || Math.abs(word.length - token.length) > k) continue;
          let shared = 0;
          for (const g of its) if (grams.has(g)) shared++;
          if (shared >= need) variant(word, -1);
        }
      out.sort((a, b) => a.distance - b.distance);
    }
    if (this.variantCache.size > 50_000) this.variantCache.clear();
    this.variantCache.set(token, out);
    return out;
  }

  private extraPostingLists(): Map<string, number[]> {
    if (this.extraPostings === null) {
      const rows = [...this.extras.values()];
      const postings = new Map<string, number[]>();
      rows.forEach((r, slot) => {
        for (const t of new Set(r.tokens)) {
          const list = postings.get(t);
          if (list) list.push(slot);
          else postings.set(t, [slot]);
        }
      });
      this.extraRows = rows;
      this.extraPostings = postings;
      this.extraWords = null;
    }
    return this.extraPostings;
  }

  /** The delta's words the vocabulary does not hold, each with its distinct trigrams. */
  private extraOnlyWords(): { word: string; grams: string[] }[] {
    const postings = this.extraPostingLists();
    this.extraWords ??= [...postings.keys()]
      .filter((word) => !this.p.vocabIds.has(word))
      .map((word) => ({ word, grams: [...new Set(trigramsOf(word))] }));
    return this.extraWords;
  }

  /** The delta's companies holding the word, as slots for extraRow (valid until the next upsert or remove). */
  extrasHolding(token: string): readonly number[] {
    return this.extras.size === 0 ? [] : (this.extraPostingLists().get(token) ?? []);
  }

  /** The delta's company in a slot of extrasHolding. */
  extraRow(slot: number): MatchRow {
    this.extraPostingLists();
    return this.extraRows![slot]!;
  }

  /** The companies holding an identifier key: built ones by index, delta ones as rows. */
  findByIdentifierKey(key: number): MatchCandidate[] {
    const out: MatchCandidate[] = [];
    for (const id of this.extraByKey.get(key) ?? []) out.push(this.extras.get(id)!);
    const keys = this.p.identifierKeys;
    for (let i = lowerBound(keys, key); i < keys.length && keys[i] === key; i++) {
      const c = this.p.identifierCompanies[i]!;
      if (this.isLive(c)) out.push(this.candidate(c));
    }
    return out;
  }

  candidate(index: number): MatchCandidate {
    const p = this.p;
    const tokens: string[] = [];
    for (let i = p.tokenStart[index]!, end = p.tokenStart[index + 1]!; i < end; i++) tokens.push(p.vocab[p.tokenIds[i]!]!);
    return {
      id: p.ids[index]!,
      status: STATUS_CODES[p.status[index]!]!,
      tokens,
      city: p.city[index]! < 0 ? null : p.places[p.city[index]!]!,
      street: p.street[index]! < 0 ? null : p.places[p.street[index]!]!,
      postal: p.postal[index]! < 0 ? null : p.postal[index]!,
    };
  }

  private changeFrequency(tokens: Iterable<string>, by: number): void {
    for (const t of new Set(tokens)) {
      const n = (this.dfChange.get(t) ?? 0) + by;
      if (n === 0) this.dfChange.delete(t);
      else this.dfChange.set(t, n);
    }
  }

  /**
   * Takes what the index holds for a company out (a company the registry no longer holds, or
   * before upsert puts its new state in): its built entry marked dead, its delta entry dropped.
   */
  remove(id: number): void {
    const p = this.p;
    const at = lowerBound(p.ids, id);
    if (at < p.ids.length && p.ids[at] === id && this.dead[at] === 0) {
      this.dead[at] = 1;
      this.deadCount++;
      this.changeFrequency(this.candidate(at).tokens, -1);
    }
    const old = this.extras.get(id);
    if (old) {
      this.extras.delete(id);
      this.changeFrequency(old.tokens, -1);
      for (const k of old.identifierKeys) {
        const ids = this.extraByKey.get(k)?.filter((x) => x !== id) ?? [];
        if (ids.length === 0) this.extraByKey.delete(k);
        else this.extraByKey.set(k, ids);
      }
    }
    this.extraRows = null;
    this.extraPostings = null;
    this.extraWords = null;
    this.variantCache.clear();
  }

  /** Puts a changed company's current state in (replacing what the index held for it). */
  upsert(row: MatchRow): void {
    this.remove(row.id);
    this.extras.set(row.id, row);
    this.changeFrequency(row.tokens, +1);
    for (const k of new Set(row.identifierKeys)) {
      const ids = this.extraByKey.get(k);
      if (ids) ids.push(row.id);
      else this.extraByKey.set(k, [row.id]);
    }
  }
}
