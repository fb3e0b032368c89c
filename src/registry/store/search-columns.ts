import type { CompanySnapshot, CompanyStatus, IdentifierType, Profile } from '../model.ts';
import { foldText, normalizeActivityCode, normalizePostalCode } from '../../lib/text.ts';
import { deriveStatus, primaryIdentifier } from '../merge.ts';
import { legalFormSlugForLabel } from '../dictionaries.ts';
import { byDisplayOrder } from '../sources/display-order.ts';

/** The denormalised search columns of a company, derived from its snapshot (pure). */

export interface CompanyColumns {
  primary_identifier_type: IdentifierType;
  primary_identifier: string;
  name: string;
  status: CompanyStatus;
  name_folded: string;
  city_folded: string | null;
  voivodeship_folded: string | null;
  postal_code: string | null;
  legal_form: string | null;
  activity_codes: string[];
  main_activity: string | null;
  activity_start: string | null;
  has_phone: boolean;
  has_email: boolean;
  has_fax: boolean;
}

/** The first profile's value that is a non-blank string, trimmed (a loop: this runs for every company written). */
function firstNonEmpty(profiles: readonly Profile[], pick: (p: Profile) => string | null | undefined): string | null {
  for (let i = 0; i < profiles.length; i++) {
    const v = pick(profiles[i]!);
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return null;
}

const pickName = (p: Profile) => p.name;
const pickLegalForm = (p: Profile) => p.legal_form;
const pickActivityStart = (p: Profile) => p.dates?.find((d) => d.type === 'activity_start')?.date;
const pickRegistration = (p: Profile) => p.dates?.find((d) => d.type === 'registration')?.date;

/**
 * Cities, voivodeships and legal forms repeat across millions of companies: their folded forms
 * are remembered (bounded, so a stream of unusual values cannot grow it without limit).
 */
function memoize<T>(fn: (s: string) => T, limit = 20_000): (s: string) => T {
  let cache = new Map<string, T>();
  return (s) => {
    let v = cache.get(s);
    if (v === undefined && !cache.has(s)) {
      v = fn(s);
      if (cache.size >= limit) cache = new Map();
      cache.set(s, v);
    }
    return v as T;
  };
}

/**
 * The longest value each indexed column keeps (companies_search_city_idx,
 * companies_search_postal_code_idx, companies_activity_codes_idx). A B-tree or GIN entry must fit
 * in about 2,700 bytes, and one over it fails the whole batch's transaction, every retry of the
 * run with it; so a value longer than any search can ask for (a city filter is at most 150
 * characters, a postal code 20, an activity code a few) is left out of its column, and the
 * company is not found by it. The snapshot keeps it as it came.
 */
export const SEARCHABLE_MAX = { city: 500, postal_code: 20, activity_code: 20 } as const;

const withinLimit = (value: string | null, max: number): string | null => (value !== null && value.length <= max ? value : null);

const foldPlace = memoize((s: string) => foldText(s) || null);
const slugOfLegalLabel = memoize(legalFormSlugForLabel);

/** The denormalised search columns of a (merged, canonical) snapshot. */
export function deriveCompanyColumns(
  snapshot: CompanySnapshot,
  slugOfLegalForm: (label: string) => string | null = slugOfLegalLabel,
): CompanyColumns {
  const primary = primaryIdentifier(snapshot);
  const profiles = byDisplayOrder(snapshot.profiles);
  const name = firstNonEmpty(profiles, pickName) ?? primary.value;
  const addressed = profiles.find((p) => p.address && (p.address.city || p.address.postal_code));
  const address = addressed?.address ?? null;
  const legalLabel = firstNonEmpty(profiles, pickLegalForm);

  // A handful of codes: an array beats a Set.
  const codes: string[] = [];
  let mainActivity: string | null = null;
  let hasPhone = false;
  let hasEmail = false;
  let hasFax = false;
  for (const p of profiles) {
    for (const a of p.activities ?? []) {
      if (!a.code) continue;
      const code = normalizeActivityCode(a.code);
      if (code.length > SEARCHABLE_MAX.activity_code) continue;
      if (!codes.includes(code)) codes.push(code);
      if (a.is_primary && mainActivity === null) mainActivity = code;
    }
    for (const c of p.contacts ?? []) {
      if (!c.value) continue;
      if (c.type === 'phone') hasPhone = true;
      else if (c.type === 'email') hasEmail = true;
      else if (c.type === 'fax') hasFax = true;
    }
  }
  const activityStart = firstNonEmpty(profiles, pickActivityStart) ?? firstNonEmpty(profiles, pickRegistration);

  return {
    primary_identifier_type: primary.type,
    primary_identifier: primary.value,
    name,
    status: deriveStatus(snapshot),
    name_folded: foldText(name),
    city_folded: address?.city ? withinLimit(foldPlace(address.city), SEARCHABLE_MAX.city) : null,
    voivodeship_folded: address?.voivodeship ? foldPlace(address.voivodeship) : null,
    postal_code: address?.postal_code ? withinLimit(normalizePostalCode(address.postal_code) || null, SEARCHABLE_MAX.postal_code) : null,
    legal_form: legalLabel === null ? null : slugOfLegalForm(legalLabel),
    activity_codes: codes.sort(),
    main_activity: mainActivity,
    activity_start: activityStart !== null && /^\d{4}-\d{2}-\d{2}$/.test(activityStart) ? activityStart : null,
    has_phone: hasPhone,
    has_email: hasEmail,
    has_fax: hasFax,
  };
}
