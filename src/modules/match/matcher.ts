import type { MatchCandidate, MatchIndex } from './match-index.ts';
import { byScore, chooseMatch, scoreCandidate, type PreparedQuery, type ScoredCandidate } from './scoring.ts';

/**
 * One query against the index: candidates from the posting lists of the query's words (and their
 * misspellings), a cheap pre-score to keep the most promising, the full score for those, best
 * first. Synchronous and free of I/O: the service calls it per query, the benchmark and the
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

/** Built companies worth scoring: by the weight of the query words they hold, then a little address agreement. */
function candidatesFromPostings(index: MatchIndex, q: PreparedQuery, variantWords: Set<string>): MatchCandidate[] {
  const groups = [...new Set(q.tokens)]
    .map((token) => {
      let variants = index.variantsOf(token).filter((v) => v.id >= 0);
      for (const v of variants) variantWords.add(v.token);
      // A common word spelt as in the registry: its misspellings (often other common words,
      // `kowalski`/`kowalska`) would multiply the walk; the full score still compares them.
      if (variants[0]?.distance === 0 && index.documentFrequency(variants[0].id) >= COMMON_WORD_DF) variants = variants.slice(0, 1);
      const cost = variants.reduce((n, v) => n + index.documentFrequency(v.id), 0);
      return { variants, cost };
    })
    .filter((g) => g.variants.length > 0)
    .sort((a, b) => a.cost - b.cost);
  if (groups.length === 0) return [];

  const { acc, touched } = scratchOf(index);
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
      const list = index.postingsOf(v.id);
      for (let i = 0; i < list.length; i++) {
        const c = list[i]!;
        if (acc[c] === 0) touched[n++] = c;
        const a = (acc[c]! += w);
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
    if (a < 0.5 * max || !index.isLive(c)) continue;
    let pre = a - 0.05 * index.tokenCount(c);
    if (cityId >= 0 && index.cityIdOf(c) === cityId) pre += 2;
    if (q.postal !== null && index.postalOf(c) === q.postal) pre += 2;
    top.offer(c, pre);
  }
  return top.items().map((c) => index.candidate(c));
}

/** The k best (item, score) pairs offered, in a min-heap on typed arrays: no object per offer. */
class TopK {
  private readonly scores: Float64Array;
  private readonly items_: Int32Array;
  private n = 0;
  constructor(private readonly k: number) {
    this.scores = new Float64Array(k);
    this.items_ = new Int32Array(k);
  }

  offer(item: number, score: number): void {
    const { scores, items_: items } = this;
    if (this.n < this.k) {
      let i = this.n++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (scores[parent]! <= score) break;
        scores[i] = scores[parent]!;
        items[i] = items[parent]!;
        i = parent;
      }
      scores[i] = score;
      items[i] = item;
      return;
    }
    if (score <= scores[0]!) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) break;
      const r = l + 1;
      const child = r < this.n && scores[r]! < scores[l]! ? r : l;
      if (scores[child]! >= score) break;
      scores[i] = scores[child]!;
      items[i] = items[child]!;
      i = child;
    }
    scores[i] = score;
    items[i] = item;
  }

  items(): number[] {
    return Array.from(this.items_.subarray(0, this.n));
  }
}

export function matchQuery(index: MatchIndex, q: PreparedQuery, limit = MAX_CANDIDATES): MatchOutcome {
  const byId = new Map<number, { c: MatchCandidate; identifier: boolean }>();
  for (const key of q.identifierKeys) for (const c of index.findByIdentifierKey(key)) byId.set(c.id, { c, identifier: true });
  const variantWords = new Set<string>(q.tokens);
  for (const c of candidatesFromPostings(index, q, variantWords)) if (!byId.has(c.id)) byId.set(c.id, { c, identifier: false });
  if (index.deltaSize > 0) {
    for (const t of q.tokens) for (const v of index.variantsOf(t)) variantWords.add(v.token);
    for (const c of index.extrasWithAnyOf(variantWords)) if (!byId.has(c.id)) byId.set(c.id, { c, identifier: false });
  }
  const weightOf = (w: string) => index.weightOf(w);
  const ranked = [...byId.values()].map(({ c, identifier }) => scoreCandidate(q, c, weightOf, identifier)).sort(byScore);
  const match = chooseMatch(ranked);
  if (match >= limit) {
    // The one identified company is always shown (chooseMatch only picks it by identifier).
    const chosen = ranked[match]!;
    return { candidates: [chosen, ...ranked.filter((r) => r !== chosen).slice(0, limit - 1)], match: 0 };
  }
  return { candidates: ranked.slice(0, limit), match };
}
