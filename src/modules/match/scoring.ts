import { identifierKey, isValidRegon14, parseIdentifier, stripFormatting } from '../../lib/identifiers.ts';
import type { IdentifierType } from '../../registry/model.ts';
import type { MatchCandidate } from './match-index.ts';
import { allowedTypos, cityKey, editDistanceWithin, identifierText, nameTokens, postalKey, streetKey } from './normalize.ts';

/**
 * How one query and one company are compared: the score from 0 to 1, the features that agreed,
 * and which candidate, if any, the service bets on. Pure functions: docs/match.md explains each
 * number, and src/modules/match/scoring.test.ts holds them to it.
 */

export const FEATURES = ['identifier', 'name', 'city', 'postal_code', 'street'] as const;
export type Feature = (typeof FEATURES)[number];

export interface MatchQuery {
  name?: string;
  nip?: string;
  regon?: string;
  krs?: string;
  city?: string;
  postal_code?: string;
  street?: string;
}

export interface PreparedQuery {
  tokens: string[];
  city: string | null;
  street: string | null;
  postal: number | null;
  /** identifierKey() of each valid identifier given; an invalid one is left out (it names no company). */
  identifierKeys: number[];
}

const IDENTIFIER_FIELDS: ReadonlyArray<readonly ['nip' | 'regon' | 'krs', IdentifierType]> = [
  ['nip', 'NIP'],
  ['regon', 'REGON9'],
  ['krs', 'KRS'],
];

/**
 * A 14-digit REGON (a local unit's, or the entity's as systems that store every REGON with 14
 * digits write it) names the company whose REGON9 its first nine digits are; anything else is
 * left for parseIdentifier to judge.
 */
function regon9Of(text: string): string {
  const digits = stripFormatting(text);
  return isValidRegon14(digits) ? digits.slice(0, 9) : text;
}

export function prepareQuery(q: MatchQuery): PreparedQuery {
  const identifierKeys: number[] = [];
  for (const [field, type] of IDENTIFIER_FIELDS) {
    const raw = q[field];
    if (!raw) continue;
    const text = identifierText(raw);
    const parsed = parseIdentifier(type, type === 'REGON9' ? regon9Of(text) : text);
    if (!parsed.ok) continue;
    const key = identifierKey(type, parsed.value);
    if (key !== null) identifierKeys.push(Number(key));
  }
  return {
    tokens: q.name ? nameTokens(q.name) : [],
    city: cityKey(q.city),
    street: streetKey(q.street),
    postal: postalKey(q.postal_code),
    identifierKeys,
  };
}

/** What one typo costs a word's agreement. */
const TYPO_COST = 0.15;

/** A word's agreement with another: 1 when equal, less a typo's cost per edit within allowedTypos, else 0. */
export function wordSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const k = Math.min(allowedTypos(a.length), allowedTypos(b.length));
  if (k === 0 || Math.abs(a.length - b.length) > k) return 0;
  const d = editDistanceWithin(a, b, k);
  return d > k ? 0 : 1 - TYPO_COST * d;
}

/**
 * Weighted Dice agreement of two bags of words, in [0, 1]: each query word is paired with the
 * most similar unused word of the other name (rare words first), a pair counts its similarity
 * times the word's weight on both sides, unpaired words only weigh in the denominator. Word order
 * does not matter; a missing or an extra word costs its weight.
 */
export function nameSimilarity(query: readonly string[], name: readonly string[], weightOf: (word: string) => number): number {
  if (query.length === 0 || name.length === 0) return 0;
  const used = new Uint8Array(name.length);
  const order = query.map((w, i) => ({ w, i, weight: weightOf(w) })).sort((a, b) => b.weight - a.weight);
  let matched = 0;
  let total = 0;
  for (const q of order) {
    let best = -1;
    let bestSim = 0;
    for (let j = 0; j < name.length; j++) {
      if (used[j]) continue;
      const sim = wordSimilarity(q.w, name[j]!);
      if (sim > bestSim) {
        bestSim = sim;
        best = j;
        if (sim === 1) break;
      }
    }
    if (best < 0) {
      total += q.weight;
      continue;
    }
    used[best] = 1;
    // A misspelt word weighs as the word it stands for (an unknown spelling would weigh as the rarest).
    const w = weightOf(name[best]!);
    matched += 2 * bestSim * w;
    total += 2 * w;
  }
  for (let j = 0; j < name.length; j++) if (!used[j]) total += weightOf(name[j]!);
  return total === 0 ? 0 : matched / total;
}

export function citiesAgree(a: string, b: string): boolean {
  return a === b || (Math.min(a.length, b.length) >= 5 && editDistanceWithin(a, b, 1) <= 1);
}

export function streetsAgree(a: string, b: string): boolean {
  if (a === b) return true;
  // `armii krajowej` = `al armii krajowej`; `jana pawla ii` = `pawla ii`.
  const aw = a.split(' ');
  const bw = b.split(' ');
  const [short, long] = aw.length <= bw.length ? [aw, bw] : [bw, aw];
  if (short.join(' ').length >= 5 && short.every((w) => long.includes(w))) return true;
  const k = Math.min(allowedTypos(a.length), allowedTypos(b.length));
  return k > 0 && editDistanceWithin(a, b, k) <= k;
}

/** Weights of the address parts in the address agreement. */
const ADDRESS_WEIGHTS = { city: 1, postal_code: 1, street: 0.5 } as const;
/** Share of the score the address takes when the query gives one the company can be compared on. */
export const ADDRESS_SHARE = 0.15;
/** A name feature is reported from this name agreement on. */
export const NAME_FEATURE_FROM = 0.75;
/** Deleted and suspended companies rank just below active ones of the same name. */
export const STATUS_FACTOR = { ACTIVE: 1, SUSPENDED: 0.99, DELETED: 0.97 } as const;

export interface ScoredCandidate {
  candidate: MatchCandidate;
  score: number;
  nameScore: number;
  identifier: boolean;
  features: Feature[];
}

export function scoreCandidate(
  q: PreparedQuery,
  c: MatchCandidate,
  weightOf: (word: string) => number,
  identifierAgrees: boolean,
  /** The query's name in its compound forms (compounds.ts), the first as written: the best agreement counts. */
  nameForms: readonly (readonly string[])[] = [q.tokens],
): ScoredCandidate {
  const features: Feature[] = [];
  if (identifierAgrees) features.push('identifier');
  let nameScore = 0;
  for (const form of nameForms) nameScore = Math.max(nameScore, nameSimilarity(form, c.tokens, weightOf));
  if (nameScore >= NAME_FEATURE_FROM) features.push('name');
  let agreed = 0;
  let compared = 0;
  const compare = (feature: 'city' | 'postal_code' | 'street', agrees: boolean) => {
    compared += ADDRESS_WEIGHTS[feature];
    if (!agrees) return;
    agreed += ADDRESS_WEIGHTS[feature];
    features.push(feature);
  };
  // A part the company has no value for counts half: neither agreement nor disagreement.
  const unknown = (feature: 'city' | 'postal_code' | 'street') => {
    compared += ADDRESS_WEIGHTS[feature];
    agreed += ADDRESS_WEIGHTS[feature] / 2;
  };
  if (q.city !== null) {
    if (c.city === null) unknown('city');
    else compare('city', citiesAgree(q.city, c.city));
  }
  if (q.postal !== null) {
    if (c.postal === null) unknown('postal_code');
    else compare('postal_code', q.postal === c.postal);
  }
  if (q.street !== null) {
    if (c.street === null) unknown('street');
    else compare('street', streetsAgree(q.street, c.street));
  }
  let score: number;
  if (identifierAgrees) score = 1;
  else {
    score = compared === 0 ? nameScore : (1 - ADDRESS_SHARE) * nameScore + ADDRESS_SHARE * (agreed / compared);
    score *= STATUS_FACTOR[c.status];
  }
  return { candidate: c, score: Math.round(score * 1000) / 1000, nameScore, identifier: identifierAgrees, features };
}

/** The best candidate is bet on from this score on… */
export const MATCH_THRESHOLD = 0.8;
/** …when the next one is at least this far behind. */
export const MATCH_MARGIN = 0.05;

export function byScore(a: ScoredCandidate, b: ScoredCandidate): number {
  return Number(b.identifier) - Number(a.identifier) || b.score - a.score || b.nameScore - a.nameScore || a.candidate.id - b.candidate.id;
}

/**
 * Which candidate (index into `ranked`, best first) the service bets on, or -1. An identifier
 * given in the query wins outright when it names one company; otherwise the best name-and-address
 * score must reach MATCH_THRESHOLD and lead the next candidate by MATCH_MARGIN.
 */
export function chooseMatch(ranked: readonly ScoredCandidate[]): number {
  if (ranked.length === 0) return -1;
  const byIdentifier = ranked.filter((r) => r.identifier);
  if (byIdentifier.length > 0) return byIdentifier.length === 1 ? ranked.indexOf(byIdentifier[0]!) : -1;
  const [best, next] = ranked;
  if (best!.score < MATCH_THRESHOLD) return -1;
  // Scores are in thousandths (scoreCandidate rounds them): compared so, 0.95 leads 0.90 by 0.05,
  // where the float subtraction gives 0.0499….
  return next === undefined || Math.round(best!.score * 1000) - Math.round(next.score * 1000) >= Math.round(MATCH_MARGIN * 1000) ? 0 : -1;
}
