import { isStoredPostalCode, type SearchFilters } from './filters.ts';
import { STATUS_CODE, dayOf, CONTACT_FLAG } from './search-index-rows.ts';
import { wordRange } from './search-index-arrays.ts';
import { type IndexParts, VOIV_MAX, VOIV_SHIFT, LEGAL_MAX, LEGAL_SHIFT, DIGITS_SHIFT } from './search-index-derive.ts';

/** How a search's filters become one plan over the index's columns (search-index.ts runs it). */

/** A query made concrete against this index's dictionaries. */
export interface Plan {
  mask: number;
  want: number;
  /** Set when the asked voivodeship or legal form has an id past its field's width. */
  exactVoiv: number;
  exactLegal: number;
  city: number;
  postal: number;
  /** Code ids any of which a row needs (activity codes, or the prefix when no codes are given). */
  codeMask: Uint8Array | null;
  /** Code ids with the prefix, when codes are given too. */
  prefixMask: Uint8Array | null;
  wordRanges: [number, number][];
  lo: number;
  hi: number;
  dated: boolean;
  impossible: boolean;
}

function codeMaskOf(p: IndexParts, pred: (code: string) => boolean): Uint8Array | null {
  const mask = new Uint8Array(p.codeIds.size + 1);
  let any = false;
  for (const [c, id] of p.codeIds) {
    if (pred(c)) {
      mask[id] = 1;
      any = true;
    }
  }
  return any ? mask : null;
}

/** The filters made concrete against the index's dictionaries; `firstUndated`: where rows without an activity start begin. */
export function planQuery(p: IndexParts, firstUndated: number, f: SearchFilters): Plan {
  const plan: Plan = {
    mask: 3,
    want: STATUS_CODE[f.status],
    exactVoiv: 0,
    exactLegal: 0,
    city: 0,
    postal: 0,
    codeMask: null,
    prefixMask: null,
    wordRanges: [],
    lo: 0,
    hi: p.n,
    dated: false,
    impossible: false,
  };
  if (f.hasContact !== null) {
    plan.mask |= CONTACT_FLAG[f.hasContact] << 2;
    plan.want |= CONTACT_FLAG[f.hasContact] << 2;
  }
  // A packed field holds ids below its max; a larger id is packed as max and checked exactly.
  const restrictPacked = (id: number | undefined, max: number, shift: number): number => {
    if (id === undefined) {
      plan.impossible = true;
      return 0;
    }
    plan.mask |= max << shift;
    plan.want |= Math.min(id, max) << shift;
    return id >= max ? id : 0;
  };
  if (f.voivodeship !== null) plan.exactVoiv = restrictPacked(p.voivodeships.get(f.voivodeship), VOIV_MAX, VOIV_SHIFT);
  if (f.legalForm !== null) plan.exactLegal = restrictPacked(p.legalForms.get(f.legalForm), LEGAL_MAX, LEGAL_SHIFT);
  if (f.city !== null) {
    plan.city = p.cities.get(f.city) ?? -1;
    if (plan.city < 0) plan.impossible = true;
  }
  if (f.postalCode !== null) {
    if (isStoredPostalCode(f.postalCode)) plan.postal = Number(f.postalCode) + 1;
    else plan.impossible = true;
  }

  const prefix = f.activityPrefix;
  if (f.activityCodes.length > 0) {
    const wanted = new Set(f.activityCodes);
    plan.codeMask = codeMaskOf(p, (c) => wanted.has(c));
    if (plan.codeMask === null) plan.impossible = true;
  }
  if (prefix !== null) {
    if (prefix.length === 1) {
      const bit = 1 << (DIGITS_SHIFT + prefix.charCodeAt(0) - 48);
      plan.mask |= bit;
      plan.want |= bit;
    } else {
      const mask = codeMaskOf(p, (c) => c.startsWith(prefix));
      if (mask === null) plan.impossible = true;
      if (plan.codeMask === null) plan.codeMask = mask;
      else plan.prefixMask = mask;
    }
  }
  for (const w of f.nameWords) {
    const [a, b] = wordRange(p.sortedWords, w);
    if (a === b) plan.impossible = true;
    plan.wordRanges.push([a, b]);
  }

  if (f.activityStartFrom !== null || f.activityStartTo !== null) {
    // Rows are in descending day order: the bounds select one contiguous slice.
    plan.dated = true;
    const days = p.days;
    const firstAtMost = (day: number) => {
      let lo = 0;
      let hi = firstUndated;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (days[mid]! > day) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    plan.lo = f.activityStartTo !== null ? firstAtMost(dayOf(f.activityStartTo)) : 0;
    plan.hi = f.activityStartFrom !== null ? firstAtMost(dayOf(f.activityStartFrom) - 1) : firstUndated;
    if (plan.hi < plan.lo) plan.hi = plan.lo;
  }
  return plan;
}
