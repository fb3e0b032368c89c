import { cities, legalFormBySlug, pkdActivities, pkdName } from '../../dictionaries.ts';
import type { City, LegalForm, PkdVersion } from '../../dictionaries.ts';
import * as words from './data.ts';
import { cumulativeOf } from './random.ts';
import { FORM_SPECS, type FormSpec, type Phase } from './forms.ts';

/** Tables built once from the dictionaries (data/dictionaries/) for the synthetic registry. */

export interface Tables {
  forms: ReadonlyArray<FormSpec & { legal: LegalForm }>;
  formWeights: Float64Array;
  formIndexBySlug: ReadonlyMap<string, number>;
  conditionCumulative: ReadonlyArray<{ phases: Phase[]; cumulative: number[] }>;
  cities: readonly City[];
  cityWeights: Float64Array;
  citiesByVoivodeship: ReadonlyMap<string, readonly City[]>;
  jdgTradeWeights: Float64Array;
  companyTradeWeights: Float64Array;
  bankWeights: Float64Array;
  pkdPool: Record<PkdVersion, readonly string[]>;
  pkdNames: Record<PkdVersion, ReadonlyMap<string, string>>;
  /** Postal code ranges of `cities` as numbers, [from, to] per city. */
  postalRanges: ReadonlyMap<City, readonly [number, number]>;
  /** Codes in both classifications whose PKD 2025 name differs from the PKD 2007 one. */
  renamedCodes: ReadonlySet<string>;
}

let tablesCache: Tables | null = null;

export function tables(): Tables {
  if (tablesCache) return tablesCache;
  const forms = FORM_SPECS.map((spec) => {
    const legal = legalFormBySlug(spec.slug);
    if (!legal) throw new Error(`legal form ${spec.slug} missing from data/dictionaries/legal-forms.json`);
    return { ...spec, legal };
  });
  const cityList = cities();
  const byVoivodeship = new Map<string, City[]>();
  for (const c of cityList) {
    const list = byVoivodeship.get(c.voivodeship) ?? [];
    list.push(c);
    byVoivodeship.set(c.voivodeship, list);
  }
  const renamed = new Set<string>();
  for (const a of pkdActivities({ version: 2007 })) {
    const newer = pkdName(a.code, 2025);
    if (newer !== null && newer !== a.name) renamed.add(a.code);
  }
  tablesCache = {
    forms,
    formWeights: cumulativeOf(forms.map((f) => f.weight)),
    formIndexBySlug: new Map(forms.map((f, i) => [f.slug, i])),
    conditionCumulative: forms.map((f) => {
      let sum = 0;
      return { phases: f.conditions.map(([p]) => p), cumulative: f.conditions.map(([, p]) => (sum += p)) };
    }),
    cities: cityList,
    cityWeights: cumulativeOf(cityList.map((c) => c.population_k)),
    citiesByVoivodeship: byVoivodeship,
    jdgTradeWeights: cumulativeOf(words.TRADES.map((t) => t.jdgWeight)),
    companyTradeWeights: cumulativeOf(words.TRADES.map((t) => t.companyWeight)),
    bankWeights: cumulativeOf(words.BANKS.map(([, w]) => w)),
    pkdPool: {
      2007: pkdActivities({ version: 2007 }).map((a) => a.code),
      2025: pkdActivities({ version: 2025 }).map((a) => a.code),
    },
    pkdNames: {
      2007: new Map(pkdActivities({ version: 2007 }).map((a) => [a.code, a.name])),
      2025: new Map(pkdActivities({ version: 2025 }).map((a) => [a.code, a.name])),
    },
    postalRanges: new Map(
      cityList.map((c) => [c, [Number(c.postal_from.replace('-', '')), Number(c.postal_to.replace('-', ''))] as const]),
    ),
    renamedCodes: renamed,
  };
  return tablesCache;
}
