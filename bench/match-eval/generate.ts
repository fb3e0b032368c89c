/**
 * Generates the labelled evaluation set of the matcher (bench/match-eval/queries.json) from the
 * synthetic registry (EVAL_REGISTRY in ./registry.ts): each query is a company's name and address
 * as people type them into spreadsheets, corrupted in realistic ways, labelled with the company's
 * NIP. A query that stays indistinguishable from another company (same words, same address parts
 * given) is labelled `ambiguous`; a name not in the registry is labelled with no NIP.
 *
 *   node --import tsx bench/match-eval/generate.ts [--queries 600]
 *
 * Deterministic: the same registry and seed give the same file. test/match-evaluation.test.ts
 * runs it through the matcher and asserts the goals (docs/match.md, "Evaluation").
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { seededRandom } from '../../src/lib/random.ts';
import type { CompanySnapshot } from '../../src/registry/model.ts';
import { deriveCompanyColumns } from '../../src/registry/store/search-columns.ts';
import { createSyntheticSource } from '../../src/registry/sources/synthetic.ts';
import { cityKey, nameTokens, postalKey, streetKey } from '../../src/modules/match/normalize.ts';
import type { MatchQuery } from '../../src/modules/match/scoring.ts';
import { dropDiacritics } from './diacritics.ts';
import { EVAL_REGISTRY } from './registry.ts';

export interface EvalQuery {
  query: MatchQuery;
  /** NIP of the company meant; null for a company the registry does not hold. */
  expected: string | null;
  /** Another company is indistinguishable from the one meant by what the query gives. */
  ambiguous: boolean;
  corruptions: string[];
}

interface Company {
  nip: string;
  name: string;
  city: string;
  postal: string;
  street: string;
  status: string;
}

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '600' },
    out: { type: 'string', default: new URL('./queries.json', import.meta.url).pathname },
  },
});
const rnd = seededRandom(20261125);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const chance = (p: number) => rnd() < p;

function companyOf(s: CompanySnapshot): Company {
  const c = deriveCompanyColumns(s);
  const a = s.profiles.find((p) => p.address)?.address;
  return {
    nip: s.identity.identifiers.find((i) => i.type === 'NIP')!.value,
    name: c.name,
    city: a?.city ?? '',
    postal: a?.postal_code ?? '',
    street: a?.street ?? '',
    status: c.status,
  };
}

const companies: Company[] = [];
for await (const s of createSyntheticSource({ seed: EVAL_REGISTRY.seed, size: EVAL_REGISTRY.size }).allSnapshots(EVAL_REGISTRY.date))
  companies.push(companyOf(s));
// Companies of another seed: names the registry does not hold (checked below).
const outsiders: Company[] = [];
for await (const s of createSyntheticSource({ seed: 99, size: 3000 }).allSnapshots(EVAL_REGISTRY.date)) outsiders.push(companyOf(s));

const nameKey = (name: string) => nameTokens(name).sort().join(' ');
const byName = new Map<string, Company[]>();
for (const c of companies) {
  const k = nameKey(c.name);
  (byName.get(k) ?? byName.set(k, []).get(k)!).push(c);
}

// ---------------------------------------------------------------------------------------------
// Corruptions

const LEGAL_VARIANTS: ReadonlyArray<readonly [RegExp, readonly string[]]> = [
  [
    /SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ|SP\. Z O\.O\./i,
    ['sp. z o.o.', 'Sp. z o. o.', 'spółka z o.o.', 'SP. Z O.O.', 'Sp.z o.o.', 'sp z oo', 'spółka z ograniczoną odpowiedzialnością'],
  ],
  [/SPÓŁKA CYWILNA|S\.C\./i, ['s.c.', 'S.C.', 'spółka cywilna']],
  [/SPÓŁKA JAWNA|SP\.J\./i, ['sp.j.', 'Sp. j.', 'spółka jawna']],
  [/SPÓŁKA KOMANDYTOWA|SP\.K\./i, ['sp.k.', 'Sp. k.', 'spółka komandytowa']],
  // Before `spółka akcyjna`, which it contains.
  [/PROSTA SPÓŁKA AKCYJNA|P\.S\.A\./i, ['P.S.A.', 'PSA', 'prosta spółka akcyjna']],
  [/SPÓŁKA AKCYJNA|S\.A\./i, ['S.A.', 'SA', 'spółka akcyjna']],
];

function legalForm(name: string): string | null {
  for (const [re, variants] of LEGAL_VARIANTS) if (re.test(name)) return name.replace(re, pick(variants));
  return null;
}
const recase = (s: string) =>
  pick([s.toLowerCase(), s.toUpperCase(), s.replace(/\p{L}+/gu, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase())]);
function punctuation(s: string): string {
  return pick([s.replace(/["„”]/g, ''), s.replace(/"([^"]+)"/, '„$1”'), s.replace(/ /, ', '), `${s}.`, s.replace(/"/g, "'")]);
}
function swapWords(s: string): string | null {
  const w = s.split(' ');
  if (w.length < 2) return null;
  const i = Math.floor(rnd() * (w.length - 1));
  [w[i], w[i + 1]] = [w[i + 1]!, w[i]!];
  return w.join(' ');
}
/** Two neighbouring words written as one, as lists do with compound names: `Auto Max` → `AutoMax`. */
function joinWords(s: string): string | null {
  const w = s.split(' ');
  // Words of the name itself: a legal form's word glued to the name (`OCHRONASPÓŁKA`) is left out.
  const word = (x: string) => /^\p{L}{3,}$/u.test(x) && nameTokens(x).length === 1;
  const pairs = w
    .slice(0, -1)
    .map((_, i) => i)
    .filter((i) => word(w[i]!) && word(w[i + 1]!));
  if (pairs.length === 0) return null;
  const i = pick(pairs);
  w.splice(i, 2, w[i]! + w[i + 1]!);
  return w.join(' ');
}
/** The acronym of a business form written out, whole or abbreviated: `PHU Max` → `Przedsiębiorstwo Handlowo-Usługowe Max`. */
const BUSINESS_FORMS: Record<string, readonly string[]> = {
  PHU: ['Przedsiębiorstwo Handlowo-Usługowe', 'Przeds. Handl.-Usł.', 'Przedsiębiorstwo Handlowo Usługowe'],
  PPHU: ['Przedsiębiorstwo Produkcyjno-Handlowo-Usługowe', 'Przeds. Prod.-Handl.-Usł.', 'P.P.H.U.'],
  FHU: ['Firma Handlowo-Usługowa', 'F.H.U.', 'Firma Handl.-Usł.'],
  PUH: ['Przedsiębiorstwo Usługowo-Handlowe', 'P.U.H.', 'Przeds. Usł.-Handl.'],
};
function writeOutBusinessForm(s: string): string | null {
  const [first, ...rest] = s.split(' ');
  const forms = BUSINESS_FORMS[first!];
  return forms ? [pick(forms), ...rest].join(' ') : null;
}
function typo(s: string): string | null {
  const words = s.split(' ');
  const long = words.map((w, i) => ({ w, i })).filter((x) => /^\p{L}{6,}$/u.test(x.w));
  if (long.length === 0) return null;
  const { w, i } = pick(long);
  const at = 1 + Math.floor(rnd() * (w.length - 2));
  const letters = 'aeioukrstnlmpz';
  const kind = pick(['swap', 'drop', 'double', 'replace'] as const);
  let out: string;
  if (kind === 'swap') out = w.slice(0, at) + w[at + 1]! + w[at]! + w.slice(at + 2);
  else if (kind === 'drop') out = w.slice(0, at) + w.slice(at + 1);
  else if (kind === 'double') out = w.slice(0, at) + w[at]! + w.slice(at);
  else out = w.slice(0, at) + pick([...letters]) + w.slice(at + 1);
  if (out === w) return null;
  words[i] = w === w.toUpperCase() ? out.toUpperCase() : out;
  return words.join(' ');
}
const nipFormats = (nip: string) =>
  pick([
    `PL${nip}`,
    `${nip.slice(0, 3)}-${nip.slice(3, 6)}-${nip.slice(6, 8)}-${nip.slice(8)}`,
    `PL ${nip.slice(0, 3)} ${nip.slice(3, 6)} ${nip.slice(6, 8)} ${nip.slice(8)}`,
    nip,
  ]);
function wrongPostal(p: string): string {
  for (;;) {
    const digits = String(Math.floor(rnd() * 100000)).padStart(5, '0');
    const other = `${digits.slice(0, 2)}-${digits.slice(2)}`;
    if (other !== p) return other;
  }
}

// ---------------------------------------------------------------------------------------------
// Queries

type Kind =
  | 'clean'
  | 'legal_form'
  | 'diacritics'
  | 'case_punctuation'
  | 'swapped_words'
  | 'joined_words'
  | 'business_form'
  | 'typo'
  | 'two_typos'
  | 'missing_city'
  | 'wrong_postal_code'
  | 'shared_name'
  | 'identifier'
  | 'street'
  | 'not_in_registry';
const KINDS: ReadonlyArray<readonly [Kind, number]> = [
  ['clean', 4],
  ['legal_form', 12],
  ['diacritics', 10],
  ['case_punctuation', 8],
  ['swapped_words', 10],
  ['joined_words', 5],
  ['business_form', 5],
  ['typo', 12],
  ['two_typos', 5],
  ['missing_city', 8],
  ['wrong_postal_code', 8],
  ['shared_name', 10],
  ['identifier', 5],
  ['street', 4],
  ['not_in_registry', 4],
];
const totalWeight = KINDS.reduce((n, [, w]) => n + w, 0);
function pickKind(): Kind {
  let r = rnd() * totalWeight;
  for (const [k, w] of KINDS) if ((r -= w) < 0) return k;
  return 'clean';
}

const sharedNames = [...byName.values()].filter((cs) => cs.length > 1);
const withBusinessForm = companies.filter((c) => BUSINESS_FORMS[c.name.split(' ')[0]!] !== undefined);

function isAmbiguous(target: Company, q: MatchQuery): boolean {
  const siblings = byName.get(nameKey(target.name)) ?? [];
  return siblings.some(
    (o) =>
      o !== target &&
      (q.city === undefined || cityKey(o.city) === cityKey(target.city)) &&
      (q.postal_code === undefined || postalKey(o.postal) === postalKey(target.postal)) &&
      (q.street === undefined || streetKey(o.street) === streetKey(target.street)),
  );
}

function build(kind: Kind): EvalQuery | null {
  if (kind === 'not_in_registry') {
    const o = pick(outsiders);
    if (byName.has(nameKey(o.name))) return null;
    return { query: { name: o.name, ...(chance(0.7) ? { city: o.city } : {}) }, expected: null, ambiguous: false, corruptions: [kind] };
  }
  const target = kind === 'shared_name' ? pick(pick(sharedNames)) : kind === 'business_form' ? pick(withBusinessForm) : pick(companies);
  if (!target.city) return null;
  const corruptions: string[] = [kind];
  let name: string | null = target.name;
  const q: MatchQuery = {};
  switch (kind) {
    case 'legal_form':
      name = legalForm(target.name);
      break;
    case 'diacritics':
      name = dropDiacritics(target.name);
      if (name === target.name) return null;
      break;
    case 'case_punctuation':
      name = punctuation(recase(target.name));
      break;
    case 'swapped_words':
      name = swapWords(target.name);
      break;
    case 'joined_words':
      name = joinWords(target.name);
      break;
    case 'business_form':
      name = writeOutBusinessForm(target.name);
      break;
    case 'typo':
      name = typo(target.name);
      break;
    case 'two_typos': {
      const once = typo(target.name);
      name = once && nameTokens(target.name).join('').length >= 16 ? typo(once) : null;
      break;
    }
    case 'identifier':
      q.nip = nipFormats(target.nip);
      name = chance(0.5) ? (typo(target.name) ?? target.name) : target.name;
      break;
    default:
      break;
  }
  if (name === null) return null;
  // A second, light corruption now and then, as real lists mix them.
  if (kind !== 'diacritics' && chance(0.3)) {
    name = dropDiacritics(name);
    corruptions.push('diacritics');
  }
  q.name = name;
  if (kind !== 'missing_city') {
    q.city = chance(0.5) ? dropDiacritics(target.city) : target.city;
    if (kind === 'wrong_postal_code') q.postal_code = wrongPostal(target.postal);
    else if (chance(0.4) || kind === 'shared_name') q.postal_code = target.postal;
    if (kind === 'street' || chance(0.15)) q.street = `${target.street} ${1 + Math.floor(rnd() * 120)}`;
  }
  const ambiguous = q.nip === undefined && isAmbiguous(target, q);
  return { query: q, expected: target.nip, ambiguous, corruptions };
}

const wanted = Number(values.queries);
const out: EvalQuery[] = [];
while (out.length < wanted) {
  const e = build(pickKind());
  if (e) out.push(e);
}
writeFileSync(
  values.out!,
  JSON.stringify({ registry: EVAL_REGISTRY, generated_by: 'bench/match-eval/generate.ts', queries: out }, null, 1) + '\n',
);
const counts = new Map<string, number>();
for (const e of out) counts.set(e.corruptions[0]!, (counts.get(e.corruptions[0]!) ?? 0) + 1);
console.log(`${out.length} queries (${out.filter((e) => e.ambiguous).length} ambiguous) → ${values.out}`);
console.log(Object.fromEntries([...counts].sort()));
