import { readFileSync } from 'node:fs';
import { foldText, normalizeActivityCode } from '../lib/text.ts';

/**
 * The registry dictionaries shipped in `data/dictionaries/` (built by scripts/build-dictionaries.ts):
 * PKD activity classes, voivodeships, legal forms and a list of cities. Each file is read on first
 * use and kept; everything returned is frozen, so callers can share it freely.
 */

export type PkdVersion = 2007 | 2025;
export type PkdLevel = 'section' | 'division' | 'group' | 'class' | 'subclass';

export interface PkdEntry {
  /** Without dots, e.g. `6210B`; sections are a letter, divisions two digits, and so on. */
  readonly code: string;
  /** Upper case, as GUS and the registries write it. */
  readonly name: string;
  readonly level: PkdLevel;
  /** Only on PKD 2007 codes withdrawn before PKD 2025 (YYYY-MM-DD). */
  readonly valid_to?: string;
}

export interface Voivodeship {
  /** Two-digit TERYT code, e.g. `14`. */
  readonly code: string;
  /** Lower case, as the registries write it, e.g. `mazowieckie`, `łódzkie`. */
  readonly name: string;
  /** ASCII, e.g. `lodzkie`. */
  readonly slug: string;
}

export interface LegalForm {
  readonly slug: string;
  /** Registry-language label, e.g. `SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ`. */
  readonly label: string;
  /** The suffix companies use in short names, e.g. `SP. Z O.O.`; null when there is none. */
  readonly abbreviation: string | null;
  /** GUS "szczególna forma prawna" symbol, e.g. `117`. */
  readonly gus_symbol: string;
  readonly gus_name: string;
  /** GUS "podstawowa forma prawna": `1` legal person, `2` unit without legal personality, `9` natural person. */
  readonly basic_form_symbol: '1' | '2' | '9';
  readonly basic_form: string;
  /** Where the entity is registered: KRS, CEIDG, only REGON (civil partnerships) or elsewhere. */
  readonly register: 'krs' | 'ceidg' | 'regon' | 'other';
  readonly aliases: readonly string[];
}

export interface City {
  readonly name: string;
  /** The voivodeship's `name`, e.g. `mazowieckie`. */
  readonly voivodeship: string;
  /** First and last postal code used in the town, `NN-NNN`. */
  readonly postal_from: string;
  readonly postal_to: string;
  /** Approximate population in thousands (used to weight generated data). */
  readonly population_k: number;
}

function readDictionary<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(`../../data/dictionaries/${file}`, import.meta.url), 'utf8')) as T;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function lazy<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= deepFreeze(load()));
}

interface PkdIndex {
  all: Record<PkdVersion, readonly PkdEntry[]>;
  byCode: Record<PkdVersion, ReadonlyMap<string, PkdEntry>>;
  subclasses: Record<PkdVersion, readonly PkdEntry[]>;
  currentSubclasses: Record<PkdVersion, readonly PkdEntry[]>;
}

const loadPkd = lazy((): PkdIndex => {
  const raw = readDictionary<{ pkd2025: PkdEntry[]; pkd2007: PkdEntry[] }>('pkd.json');
  // PKD 2007 lists some codes twice (a version withdrawn in 2017 and its successor): the current one wins.
  const index = (entries: PkdEntry[]) => {
    const map = new Map<string, PkdEntry>();
    for (const e of entries) if (!map.has(e.code) || map.get(e.code)!.valid_to !== undefined) map.set(e.code, e);
    return map;
  };
  const subclasses = (entries: PkdEntry[]) => entries.filter((e) => e.level === 'subclass');
  const current = (entries: PkdEntry[]) => entries.filter((e) => e.level === 'subclass' && e.valid_to === undefined);
  return {
    all: { 2025: raw.pkd2025, 2007: raw.pkd2007 },
    byCode: { 2025: index(raw.pkd2025), 2007: index(raw.pkd2007) },
    subclasses: { 2025: subclasses(raw.pkd2025), 2007: subclasses(raw.pkd2007) },
    currentSubclasses: { 2025: current(raw.pkd2025), 2007: current(raw.pkd2007) },
  };
});

/**
 * PKD entries: by default the PKD 2025 subclasses (the codes companies register, e.g. `6210B`).
 * `level: 'all'` gives every level from sections down; withdrawn PKD 2007 codes are left out
 * unless `includeWithdrawn`.
 */
export function pkdActivities(
  options: { version?: PkdVersion; level?: 'subclass' | 'all'; includeWithdrawn?: boolean } = {},
): readonly PkdEntry[] {
  const pkd = loadPkd();
  const version = options.version ?? 2025;
  if (options.level === 'all') {
    return options.includeWithdrawn ? pkd.all[version] : pkd.all[version].filter((e) => e.valid_to === undefined);
  }
  return options.includeWithdrawn ? pkd.subclasses[version] : pkd.currentSubclasses[version];
}

/** The entry for a code written with or without dots (`62.10.B` = `6210B`), at any level. */
export function pkdEntry(code: string, version?: PkdVersion): PkdEntry | null {
  const pkd = loadPkd();
  const normalized = normalizeActivityCode(code);
  if (version !== undefined) return pkd.byCode[version].get(normalized) ?? null;
  return pkd.byCode[2025].get(normalized) ?? pkd.byCode[2007].get(normalized) ?? null;
}

/**
 * The name of a PKD code. Without a version PKD 2025 is asked first, then PKD 2007, because
 * registries still carry PKD 2007 codes that PKD 2025 dropped (`6201Z`); where both have the
 * code, ask for the version the source uses.
 */
export function pkdName(code: string, version?: PkdVersion): string | null {
  return pkdEntry(code, version)?.name ?? null;
}

const loadVoivodeships = lazy(() => readDictionary<{ records: Voivodeship[] }>('voivodeships.json').records);
const loadVoivodeshipIndex = lazy(() => {
  const index = new Map<string, Voivodeship>();
  for (const v of loadVoivodeships()) {
    index.set(v.code, v);
    index.set(foldText(v.name), v);
    index.set(v.slug, v);
  }
  return index;
});

export function voivodeships(): readonly Voivodeship[] {
  return loadVoivodeships();
}

/** By TERYT code, name or slug, ignoring case, diacritics and a leading `województwo`. */
export function findVoivodeship(value: string): Voivodeship | null {
  const folded = foldText(value).replace(/^(?:wojewodztwo|woj\.?)\s*/, '');
  return loadVoivodeshipIndex().get(folded) ?? loadVoivodeshipIndex().get(folded.replace(/\s+/g, '-')) ?? null;
}

const loadLegalForms = lazy(() => readDictionary<{ records: LegalForm[] }>('legal-forms.json').records);

/** Letters and digits only, folded: `Sp. z o.o.` and `SP.Z O.O.` meet as `spzoo`. */
function labelKey(label: string): string {
  return foldText(label).replace(/[^a-z0-9]+/g, '');
}

const loadLegalFormIndex = lazy(() => {
  const bySlug = new Map<string, LegalForm>();
  const bySymbol = new Map<string, LegalForm>();
  const byLabel = new Map<string, LegalForm>();
  for (const form of loadLegalForms()) {
    bySlug.set(form.slug, form);
    bySymbol.set(form.gus_symbol, form);
    for (const text of [form.label, form.gus_name, form.abbreviation, ...form.aliases]) {
      if (text) byLabel.set(labelKey(text), form);
    }
  }
  // Slugs last: a label such as `S.A.` must not be shadowed by the key of another slug.
  for (const form of loadLegalForms()) if (!byLabel.has(labelKey(form.slug))) byLabel.set(labelKey(form.slug), form);
  return { bySlug, bySymbol, byLabel };
});

export function legalForms(): readonly LegalForm[] {
  return loadLegalForms();
}

export function legalFormBySlug(slug: string): LegalForm | null {
  return loadLegalFormIndex().bySlug.get(slug) ?? null;
}

/** By GUS "szczególna forma prawna" symbol, with or without leading zeros (`19` = `019`). */
export function legalFormByGusSymbol(symbol: string): LegalForm | null {
  const trimmed = symbol.trim();
  return loadLegalFormIndex().bySymbol.get(trimmed.padStart(3, '0')) ?? null;
}

/**
 * The slug of a registry's legal-form label, ignoring case, diacritics, spacing and punctuation:
 * `SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ`, `Spolka z o.o.`, `SP. Z O.O.` and GUS's plural
 * `SPÓŁKI Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ` all give `sp-z-oo`. Null when unknown.
 */
export function legalFormSlugForLabel(label: string): string | null {
  if (typeof label !== 'string' || label.trim() === '') return null;
  return loadLegalFormIndex().byLabel.get(labelKey(label))?.slug ?? null;
}

const loadCities = lazy(() => readDictionary<{ records: City[] }>('cities.json').records);

export function cities(): readonly City[] {
  return loadCities();
}
