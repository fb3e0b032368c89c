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
 * new state kept in a small list scanned beside the arrays; a rebuild folds the delta in.
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
  private readonly extraByKey = new Map<number, number>();
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
    const id = this.p.vocabIds.get(token);
    const df = id === undefined ? 1 : Math.max(1, this.p.df[id]!);
    return Math.log(1 + Math.max(1, this.companies) / df);
  }

  tokenId(token: string): number {
    return this.p.vocabIds.get(token) ?? -1;
  }

  documentFrequency(id: number): number {
    return this.p.df[id]!;
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
   * The vocabulary's words within allowedTypos of `token` (itself included when known), nearest
   * first. Candidates come from shared trigrams: one edit changes at most three of a word's
   * trigrams, and a transposition four, so a word `k` edits away shares at least `len - 4k` of them.
   */
  variantsOf(token: string): TokenVariant[] {
    const cached = this.variantCache.get(token);
    if (cached) return cached;
    const p = this.p;
    const out: TokenVariant[] = [];
    const exact = p.vocabIds.get(token);
    if (exact !== undefined) out.push({ token, id: exact, distance: 0 });
    const k = allowedTypos(token.length);
    if (k > 0) {
      const grams = trigramsOf(token);
      const need = Math.max(1, grams.length - 4 * k);
      const { counter, touched } = this;
      for (const g of new Set(grams)) {
        const gid = p.trigramIds.get(g);
        if (gid === undefined) continue;
        for (let i = p.trigramStart[gid]!, end = p.trigramStart[gid + 1]!; i < end; i++) {
          const t = p.trigramTokens[i]!;
          if (counter[t] === 0) touched.push(t);
          if (counter[t]! < 65535) counter[t]!++;
        }
      }
      for (const t of touched) {
        if (counter[t]! >= need && t !== exact) {
          const word = p.vocab[t]!;
          const d = editDistanceWithin(token, word, Math.min(k, allowedTypos(word.length)));
          if (d <= k && d <= allowedTypos(word.length)) out.push({ token: word, id: t, distance: d });
        }
        counter[t] = 0;
      }
      touched.length = 0;
      for (const extra of this.extraWords()) {
        if (extra === token || p.vocabIds.has(extra)) continue;
        const d = editDistanceWithin(token, extra, Math.min(k, allowedTypos(extra.length)));
        if (d <= k) out.push({ token: extra, id: -1, distance: d });
      }
      if (exact === undefined && this.extraWordSet().has(token)) out.push({ token, id: -1, distance: 0 });
      out.sort((a, b) => a.distance - b.distance);
    } else if (exact === undefined && this.extraWordSet().has(token)) {
      out.push({ token, id: -1, distance: 0 });
    }
    if (this.variantCache.size > 50_000) this.variantCache.clear();
    this.variantCache.set(token, out);
    return out;
  }

  private extraWordsCache: Set<string> | null = null;
  private extraWordSet(): Set<string> {
    if (this.extraWordsCache === null) {
      this.extraWordsCache = new Set();
      for (const r of this.extras.values()) for (const t of r.tokens) this.extraWordsCache.add(t);
    }
    return this.extraWordsCache;
  }

  private extraWords(): Iterable<string> {
    return this.extras.size === 0 ? [] : this.extraWordSet();
  }

  /** The companies holding an identifier key: built ones by index, delta ones as rows. */
  findByIdentifierKey(key: number): MatchCandidate[] {
    const out: MatchCandidate[] = [];
    const extraId = this.extraByKey.get(key);
    if (extraId !== undefined) out.push(this.extras.get(extraId)!);
    const keys = this.p.identifierKeys;
    for (let i = lowerBound(keys, key); i < keys.length && keys[i] === key; i++) {
      const c = this.p.identifierCompanies[i]!;
      if (this.isLive(c)) out.push(this.candidate(c));
    }
    return out;
  }

  /** The delta's companies sharing a word with `words` (imports are few: a scan). */
  extrasWithAnyOf(words: ReadonlySet<string>): MatchCandidate[] {
    const out: MatchCandidate[] = [];
    for (const r of this.extras.values()) if (r.tokens.some((t) => words.has(t))) out.push(r);
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

  /** Puts a changed company's current state in (replacing what the index held for it). */
  upsert(row: MatchRow): void {
    const p = this.p;
    const at = lowerBound(p.ids, row.id);
    if (at < p.ids.length && p.ids[at] === row.id && this.dead[at] === 0) {
      this.dead[at] = 1;
      this.deadCount++;
    }
    const old = this.extras.get(row.id);
    if (old) for (const k of old.identifierKeys) if (this.extraByKey.get(k) === row.id) this.extraByKey.delete(k);
    this.extras.set(row.id, row);
    for (const k of row.identifierKeys) this.extraByKey.set(k, row.id);
    this.extraWordsCache = null;
    this.variantCache.clear();
  }
}
