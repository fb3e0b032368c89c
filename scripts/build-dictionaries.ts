/**
 * Regenerates the compact dictionaries in `data/dictionaries/` from the official GUS/TERYT
 * fixtures, so a clone of the repository works without them:
 *
 *   node --import tsx scripts/build-dictionaries.ts [FIXTURES_DIR]
 *
 * FIXTURES_DIR holds `pkd-2025-gus-bir12.json`, `pkd-2007-gus-bir11.json`,
 * `wojewodztwa-teryt-terc-2024-01-01.json` and `gus-szczegolna-forma-prawna.json`
 * (default: `fixtures/dictionaries`). `cities.json` is written by hand; this script only checks it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { foldText } from '../src/lib/text.ts';

const OUT_DIR = fileURLToPath(new URL('../data/dictionaries/', import.meta.url));

interface GusRecord {
  symbol: string;
  nazwa: string;
  dataOd: string | null;
  dataDo: string | null;
}
interface PkdRecord {
  kod: string;
  nazwa: string;
  dataOd: string | null;
  dataDo: string | null;
}

type PkdLevel = 'section' | 'division' | 'group' | 'class' | 'subclass';
const LEVEL_BY_LENGTH: Record<number, PkdLevel> = { 1: 'section', 2: 'division', 3: 'group', 4: 'class', 5: 'subclass' };

/**
 * The legal forms the service names by slug. Labels are singular, as KRS writes `formaPrawna`
 * (GUS names its categories in the plural, kept as `gus_name`); `basic_form` is GUS's
 * "podstawowa forma prawna", which becomes the snapshot's `identity.company_type`.
 */
const LEGAL_FORMS: ReadonlyArray<{
  slug: string;
  label: string;
  abbreviation: string | null;
  gus_symbol: string;
  basic_form: '1' | '2' | '9';
  register: 'krs' | 'ceidg' | 'regon' | 'other';
  aliases?: string[];
}> = [
  {
    slug: 'jdg',
    label: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
    abbreviation: null,
    gus_symbol: '099',
    basic_form: '9',
    register: 'ceidg',
    aliases: ['JEDNOOSOBOWA DZIAŁALNOŚĆ GOSPODARCZA', 'DZIAŁALNOŚĆ GOSPODARCZA', 'PRZEDSIĘBIORCA INDYWIDUALNY'],
  },
  {
    slug: 'sp-z-oo',
    label: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    abbreviation: 'SP. Z O.O.',
    gus_symbol: '117',
    basic_form: '1',
    register: 'krs',
    aliases: ['SPÓŁKA Z O.O.'],
  },
  { slug: 'sa', label: 'SPÓŁKA AKCYJNA', abbreviation: 'S.A.', gus_symbol: '116', basic_form: '1', register: 'krs' },
  { slug: 'psa', label: 'PROSTA SPÓŁKA AKCYJNA', abbreviation: 'P.S.A.', gus_symbol: '113', basic_form: '1', register: 'krs' },
  { slug: 'spolka-jawna', label: 'SPÓŁKA JAWNA', abbreviation: 'SP.J.', gus_symbol: '118', basic_form: '2', register: 'krs' },
  { slug: 'spolka-partnerska', label: 'SPÓŁKA PARTNERSKA', abbreviation: 'SP.P.', gus_symbol: '115', basic_form: '2', register: 'krs' },
  { slug: 'spolka-komandytowa', label: 'SPÓŁKA KOMANDYTOWA', abbreviation: 'SP.K.', gus_symbol: '120', basic_form: '2', register: 'krs' },
  {
    slug: 'spolka-komandytowo-akcyjna',
    label: 'SPÓŁKA KOMANDYTOWO-AKCYJNA',
    abbreviation: 'S.K.A.',
    gus_symbol: '121',
    basic_form: '2',
    register: 'krs',
  },
  { slug: 'spolka-europejska', label: 'SPÓŁKA EUROPEJSKA', abbreviation: 'SE', gus_symbol: '122', basic_form: '1', register: 'krs' },
  { slug: 'spolka-cywilna', label: 'SPÓŁKA CYWILNA', abbreviation: 'S.C.', gus_symbol: '019', basic_form: '2', register: 'regon' },
  { slug: 'spoldzielnia', label: 'SPÓŁDZIELNIA', abbreviation: null, gus_symbol: '140', basic_form: '1', register: 'krs' },
  { slug: 'fundacja', label: 'FUNDACJA', abbreviation: null, gus_symbol: '148', basic_form: '1', register: 'krs' },
  { slug: 'fundacja-rodzinna', label: 'FUNDACJA RODZINNA', abbreviation: null, gus_symbol: '048', basic_form: '1', register: 'other' },
  { slug: 'stowarzyszenie', label: 'STOWARZYSZENIE', abbreviation: null, gus_symbol: '155', basic_form: '1', register: 'krs' },
  {
    slug: 'stowarzyszenie-zwykle',
    label: 'STOWARZYSZENIE ZWYKŁE',
    abbreviation: null,
    gus_symbol: '055',
    basic_form: '2',
    register: 'other',
  },
  { slug: 'zwiazek-stowarzyszen', label: 'ZWIĄZEK STOWARZYSZEŃ', abbreviation: null, gus_symbol: '156', basic_form: '1', register: 'krs' },
  {
    slug: 'przedsiebiorstwo-panstwowe',
    label: 'PRZEDSIĘBIORSTWO PAŃSTWOWE',
    abbreviation: null,
    gus_symbol: '124',
    basic_form: '1',
    register: 'krs',
  },
  {
    slug: 'towarzystwo-ubezpieczen-wzajemnych',
    label: 'TOWARZYSTWO UBEZPIECZEŃ WZAJEMNYCH',
    abbreviation: 'TUW',
    gus_symbol: '126',
    basic_form: '1',
    register: 'krs',
  },
  {
    slug: 'europejskie-zgrupowanie-interesow-gospodarczych',
    label: 'EUROPEJSKIE ZGRUPOWANIE INTERESÓW GOSPODARCZYCH',
    abbreviation: 'EZIG',
    gus_symbol: '114',
    basic_form: '1',
    register: 'krs',
  },
  {
    slug: 'oddzial-przedsiebiorcy-zagranicznego',
    label: 'ODDZIAŁ ZAGRANICZNEGO PRZEDSIĘBIORCY',
    abbreviation: null,
    gus_symbol: '179',
    basic_form: '2',
    register: 'krs',
    aliases: ['ODDZIAŁ PRZEDSIĘBIORCY ZAGRANICZNEGO'],
  },
  { slug: 'instytut-badawczy', label: 'INSTYTUT BADAWCZY', abbreviation: null, gus_symbol: '165', basic_form: '1', register: 'krs' },
  {
    slug: 'spzoz',
    label: 'SAMODZIELNY PUBLICZNY ZAKŁAD OPIEKI ZDROWOTNEJ',
    abbreviation: 'SPZOZ',
    gus_symbol: '146',
    basic_form: '1',
    register: 'krs',
  },
  {
    slug: 'skok',
    label: 'SPÓŁDZIELCZA KASA OSZCZĘDNOŚCIOWO-KREDYTOWA',
    abbreviation: 'SKOK',
    gus_symbol: '180',
    basic_form: '1',
    register: 'krs',
  },
  { slug: 'zwiazek-zawodowy', label: 'ZWIĄZEK ZAWODOWY', abbreviation: null, gus_symbol: '172', basic_form: '1', register: 'krs' },
  { slug: 'zwiazek-pracodawcow', label: 'ZWIĄZEK PRACODAWCÓW', abbreviation: null, gus_symbol: '174', basic_form: '1', register: 'krs' },
  { slug: 'izba-gospodarcza', label: 'IZBA GOSPODARCZA', abbreviation: null, gus_symbol: '169', basic_form: '1', register: 'krs' },
  { slug: 'cech-rzemieslniczy', label: 'CECH RZEMIEŚLNICZY', abbreviation: null, gus_symbol: '147', basic_form: '1', register: 'krs' },
  { slug: 'uczelnia', label: 'UCZELNIA', abbreviation: null, gus_symbol: '044', basic_form: '1', register: 'other' },
  {
    slug: 'wspolnota-mieszkaniowa',
    label: 'WSPÓLNOTA MIESZKANIOWA',
    abbreviation: null,
    gus_symbol: '085',
    basic_form: '2',
    register: 'other',
  },
  { slug: 'partia-polityczna', label: 'PARTIA POLITYCZNA', abbreviation: null, gus_symbol: '070', basic_form: '1', register: 'other' },
];

const BASIC_FORM_LABELS: Record<'1' | '2' | '9', string> = {
  '1': 'OSOBA PRAWNA',
  '2': 'JEDNOSTKA ORGANIZACYJNA NIEMAJĄCA OSOBOWOŚCI PRAWNEJ',
  '9': 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
};

function readRecords<T>(dir: string, file: string): { source: string; records: T[] } {
  const path = join(dir, file);
  if (!existsSync(path)) throw new Error(`missing fixture ${path}`);
  return JSON.parse(readFileSync(path, 'utf8')) as { source: string; records: T[] };
}

function slugify(s: string): string {
  return foldText(s)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** One record a line: small diffs when a dictionary changes, still valid JSON. */
function writeJson(file: string, header: Record<string, unknown>, lists: Record<string, unknown[]>): void {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(header)) parts.push(` ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  for (const [key, rows] of Object.entries(lists)) {
    parts.push(` ${JSON.stringify(key)}: [\n  ${rows.map((r) => JSON.stringify(r)).join(',\n  ')}\n ]`);
  }
  writeFileSync(join(OUT_DIR, file), `{\n${parts.join(',\n')}\n}\n`);
}

function buildPkd(dir: string): void {
  const pkd2025 = readRecords<PkdRecord>(dir, 'pkd-2025-gus-bir12.json');
  const pkd2007 = readRecords<PkdRecord>(dir, 'pkd-2007-gus-bir11.json');
  const toRows = (records: PkdRecord[]) =>
    records.map((r) => {
      const level = LEVEL_BY_LENGTH[r.kod.length];
      if (!level) throw new Error(`unexpected PKD code ${r.kod}`);
      return r.dataDo ? { code: r.kod, name: r.nazwa, level, valid_to: r.dataDo } : { code: r.kod, name: r.nazwa, level };
    });
  writeJson(
    'pkd.json',
    {
      source:
        'Derived by scripts/build-dictionaries.ts from the GUS BIR dictionaries (BIR12_SlownikPKD2025.xlsx rows valid from 2025-01-01; BIR11_SlownikPKD2007_wersja2020.xlsx). Codes without dots; level = section, division, group, class or subclass; valid_to only on PKD 2007 codes withdrawn before 2025.',
    },
    { pkd2025: toRows(pkd2025.records), pkd2007: toRows(pkd2007.records) },
  );
}

function buildVoivodeships(dir: string): void {
  const terc = readRecords<{ WOJ: string; NAZWA: string }>(dir, 'wojewodztwa-teryt-terc-2024-01-01.json');
  if (terc.records.length !== 16) throw new Error(`expected 16 voivodeships, got ${terc.records.length}`);
  const rows = terc.records.map((r) => {
    const name = r.NAZWA.toLocaleLowerCase('pl');
    return { code: r.WOJ, name, slug: slugify(name) };
  });
  writeJson(
    'voivodeships.json',
    {
      source:
        'Derived by scripts/build-dictionaries.ts from the TERYT TERC register (state 2024-01-01): two-digit TERYT code, name in lower case as the registries write it, ASCII slug.',
    },
    { records: rows },
  );
}

function buildLegalForms(dir: string): void {
  const gus = readRecords<GusRecord>(dir, 'gus-szczegolna-forma-prawna.json');
  const current = new Map(gus.records.filter((r) => r.dataDo === null).map((r) => [r.symbol, r.nazwa.trim()]));
  const rows = LEGAL_FORMS.map((f) => {
    const gusName = current.get(f.gus_symbol);
    if (!gusName) throw new Error(`GUS special legal form ${f.gus_symbol} (${f.slug}) is not current in the dictionary`);
    return {
      slug: f.slug,
      label: f.label,
      abbreviation: f.abbreviation,
      gus_symbol: f.gus_symbol,
      gus_name: gusName,
      basic_form_symbol: f.basic_form,
      basic_form: BASIC_FORM_LABELS[f.basic_form],
      register: f.register,
      aliases: f.aliases ?? [],
    };
  });
  const slugs = new Set(rows.map((r) => r.slug));
  if (slugs.size !== rows.length) throw new Error('duplicate legal form slug');
  writeJson(
    'legal-forms.json',
    {
      source:
        'Written for regwatch by scripts/build-dictionaries.ts: slug, registry-language label (singular, as KRS writes it), the GUS "szczególna forma prawna" symbol and name (BIR11_Slowniki_2024-01-31.xlsx), the GUS "podstawowa forma prawna", and the register that keeps the entity.',
    },
    { records: rows },
  );
}

const POSTAL = /^\d{2}-\d{3}$/;

function checkCities(): void {
  const voivodeships = JSON.parse(readFileSync(join(OUT_DIR, 'voivodeships.json'), 'utf8')) as { records: { name: string }[] };
  const names = new Set(voivodeships.records.map((v) => v.name));
  const cities = JSON.parse(readFileSync(join(OUT_DIR, 'cities.json'), 'utf8')) as {
    records: { name: string; voivodeship: string; postal_from: string; postal_to: string; population_k: number }[];
  };
  const seen = new Set<string>();
  for (const c of cities.records) {
    if (!names.has(c.voivodeship)) throw new Error(`cities.json: ${c.name} has unknown voivodeship ${c.voivodeship}`);
    if (!POSTAL.test(c.postal_from) || !POSTAL.test(c.postal_to) || c.postal_from > c.postal_to) {
      throw new Error(`cities.json: ${c.name} has a bad postal range`);
    }
    if (!(c.population_k > 0)) throw new Error(`cities.json: ${c.name} has no population`);
    if (seen.has(c.name)) throw new Error(`cities.json: ${c.name} twice`);
    seen.add(c.name);
  }
}

function main(): void {
  const dir = resolve(process.argv[2] ?? 'fixtures/dictionaries');
  buildPkd(dir);
  buildVoivodeships(dir);
  buildLegalForms(dir);
  checkCities();
  console.log(`dictionaries written to ${OUT_DIR}`);
}

main();
