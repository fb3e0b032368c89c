import type { MatchCandidate, MatchIndex } from './match-index.ts';
import { compoundForms } from './compounds.ts';
import { byScore, chooseMatch, scoreCandidate, type PreparedQuery, type ScoredCandidate } from './scoring.ts';

/**
 * One query against the index: candidates from the posting lists of the query's words (and their
 * misspellings), in each of the name's compound forms (compounds.ts), a cheap pre-score to keep
 * the most promising, the full score for those (the best of the forms), best first. Synchronous and free of I/O: the service calls it per query, the benchmark and the
 * evaluation directly.
 */

/** Posting entries a query may walk (its rarest word's are always walked). */
const POSTING_BUDGET = 200_000;
/** From this many companies on, a correctly spelt word is walked without its misspellings. */
const COMMON_WORD_DF = 2_000;
/** Candidates given the full score. */
const FULL_SCORE_LIMIT = 60;
export const MAX_CANDIDATES = 5;

export interface MatchOutcome {
  /** Best first, at most MAX_CANDIDATES. */
  candidates: ScoredCandidate[];
  /** Index into `candidates` of the one bet on, or -1. */
  match: number;
}

interface Scratch {
  acc: Float32Array;
  touched: Int32Array;
}

const scratches = new WeakMap<MatchIndex, Scratch>();

function scratchOf(index: MatchIndex): Scratch {
  let s = scratches.get(index);
  if (!s) {
    s = { acc: new Float32Array(index.size), touched: new Int32Array(index.size) };
    scratches.set(index, s);
  }
  return s;
}

/**
 * Companies worth scoring: by the weight of the query words they hold, then a little address
 * agreement. The delta's companies (match-index.ts) are walked, summed, dropped and ranked with
 * the built ones, by the same rules, so that a company is a candidate whether it came with the
 * build or after it, as a rebuild would make it one.
 */
function candidatesFromPostings(index: MatchIndex, q: PreparedQuery): MatchCandidate[] {
  const groups = [...new Set(q.tokens)]
    .map((token) => {
      let variants = index.variantsOf(token);
      // A common word spelt as in the registry: its misspellings (often other common words,
      // `kowalski`/`kowalska`) would multiply the walk; the full score still compares them.
      if (variants[0]?.distance === 0 && index.frequencyOf(variants[0].token) >= COMMON_WORD_DF) variants = variants.slice(0, 1);
      const cost = variants.reduce((n, v) => n + index.frequencyOf(v.token), 0);
      return { variants, cost };
    })
    .filter((g) => g.variants.length > 0)
    .sort((a, b) => a.cost - b.cost);
  if (groups.length === 0) return [];

  const { acc, touched } = scratchOf(index);
  // The delta's sums, by slot (index.extrasHolding): a delta holds at most a few thousand companies.
  const delta = index.deltaSize;
  const extraAcc = delta > 0 ? new Float32Array(delta) : null;
  const extraTouched: number[] = [];
  const weights = groups.map((g) => Math.max(...g.variants.map((v) => index.weightOf(v.token) * (1 - 0.15 * v.distance))));
  let unwalked = weights.reduce((a, b) => a + b, 0);
  let n = 0;
  let spent = 0;
  let max = 0;
  for (const [gi, g] of groups.entries()) {
    // Candidates below half the best sum are dropped below; a company holding none of the words
    // walked so far can reach no more than the words left, so once those weigh under half the
    // best sum, walking them (the commonest, the longest lists) cannot add a candidate.
    if (gi > 0 && (spent + g.cost > POSTING_BUDGET || unwalked < 0.5 * max)) break;
    spent += g.cost;
    unwalked -= weights[gi]!;
    for (const v of g.variants) {
      const w = index.weightOf(v.token) * (1 - 0.15 * v.distance);
      if (v.id >= 0) {
        const list = index.postingsOf(v.id);
        for (let i = 0; i < list.length; i++) {
          const c = list[i]!;
          // A replaced entry is not a company any more: it neither counts nor raises the best sum.
          if (!index.isLive(c)) continue;
          if (acc[c] === 0) touched[n++] = c;
          const a = (acc[c]! += w);
          if (a > max) max = a;
        }
      }
      if (extraAcc !== null)
        for (const s of index.extrasHolding(v.token)) {
          if (extraAcc[s] === 0) extraTouched.push(s);
          const a = (extraAcc[s]! += w);
          if (a > max) max = a;
        }
    }
  }
  const top = new TopK(FULL_SCORE_LIMIT);
  const cityId = q.city === null ? -2 : index.placeId(q.city);
  for (let i = 0; i < n; i++) {
    const c = touched[i]!;
    const a = acc[c]!;
    acc[c] = 0;
    if (a < 0.5 * max) continue;
    let pre = a - 0.05 * index.tokenCount(c);
    if (cityId >= 0 && index.cityIdOf(c) === cityId) pre += 2;
    if (q.postal !== null && index.postalOf(c) === q.postal) pre += 2;
    top.offer(c, pre, index.idOf(c));
  }
  for (const s of extraTouched) {
    const a = extraAcc![s]!;
    if (a < 0.5 * max) continue;
    const row = index.extraRow(s);
    let pre = a - 0.05 * row.tokens.length;
    if (q.city !== null && row.city === q.city) pre += 2;
    if (q.postal !== null && row.postal === q.postal) pre += 2;
    top.offer(index.size + s, pre, row.id);
  }
  return top.items().map((c) => (c < index.size ? index.candidate(c) : index.extraRow(c - index.size)));
}

/**
 * The k best (item, score) pairs offered, in a min-heap on typed arrays: no object per offer.
 * Equal scores are told apart by `key` (companies.id, the lower first), so which of them are kept
 * does not depend on the order they were offered in (the build's or the delta's).
 */
class TopK {
  private readonly scores: Float64Array;
  private readonly keys: Float64Array;
  private readonly items_: Int32Array;
  private n = 0;
  constructor(private readonly k: number) {
    this.scores = new Float64Array(k);
    this.keys = new Float64Array(k);
    this.items_ = new Int32Array(k);
  }

  /** Whether entry `i` ranks below (score, key). */
  private below(i: number, score: number, key: number): boolean {
    const s = this.scores[i]!;
    return s < score || (s === score && this.keys[i]! > key);
  }

  private put(i: number, item: number, score: number, key: number): void {
    this.scores[i] = score;
    this.keys[i] = key;
    this.items_[i] = item;
  }

  private move(to: number, from: number): void {
    this.put(to, this.items_[from]!, this.scores[from]!, this.keys[from]!);
  }

  offer(item: number, score: number, key: number): void {
    if (this.n < this.k) {
      let i = this.n++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.below(parent, score, key)) break;
        this.move(i, parent);
        i = parent;
      }
      this.put(i, item, score, key);
      return;
    }
    if (!this.below(0, score, key)) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) break;
      const r = l + 1;
      const child = r < this.n && this.below(r, this.scores[l]!, this.keys[l]!) ? r : l;
      if (!this.below(child, score, key)) break;
      this.move(i, child);
      i = child;
    }
    this.put(i, item, score, key);
  }

  items(): number[] {
    return Array.from(this.items_.subarray(0, this.n));
  }
}

export function matchQuery(index: MatchIndex, q: PreparedQuery, limit = MAX_CANDIDATES): MatchOutcome {
  const byId = new Map<number, { c: MatchCandidate; identifier: boolean }>();
  for (const key of q.identifierKeys) for (const c of index.findByIdentifierKey(key)) byId.set(c.id, { c, identifier: true });
  const forms = compoundForms(q.tokens, (w) => index.frequencyOf(w) > 0);
  for (const tokens of forms)
    for (const c of candidatesFromPostings(index, tokens === forms[0] ? q : { ...q, tokens }))
      if (!byId.has(c.id)) byId.set(c.id, { c, identifier: false });
  const weightOf = (w: string) => index.weightOf(w);
  const ranked = [...byId.values()].map(({ c, identifier }) => scoreCandidate(q, c, weightOf, identifier, forms)).sort(byScore);
  const match = chooseMatch(ranked);
  if (match >= limit) {
    // The one identified company is always shown (chooseMatch only picks it by identifier).
    const chosen = ranked[match]!;
    return { candidates: [chosen, ...ranked.filter((r) => r !== chosen).slice(0, limit - 1)], match: 0 };
  }
  return { candidates: ranked.slice(0, limit), match };
}
