import type {
  Activity,
  Address,
  CompanySnapshot,
  Contact,
  ContactType,
  DatedEntry,
  DateType,
  Identifier,
  LocalUnit,
  Person,
} from '../model.ts';
import { nipCheckDigit, regon14CheckDigit, regon9CheckDigit } from '../../lib/identifiers.ts';
import { cities, legalFormBySlug, pkdActivities, pkdName, type City, type LegalForm, type PkdVersion } from '../dictionaries.ts';
import * as words from './synthetic-data.ts';
import type { Trade } from './synthetic-data.ts';
import type { RegistrySource } from './source.ts';

/**
 * The `synthetic[:SEED]` source: a deterministic, realistic Polish business registry.
 *
 * Company `i` is a pure function of (seed, i): its base state comes from a PRNG keyed by a hash
 * of both, as of `epoch`. The days it changes on after the epoch are a fixed sequence drawn from
 * another PRNG keyed by (seed, i), with geometric gaps (about 0.5 % of companies change a day);
 * a PRNG keyed by (seed, i, day) decides what changes, given the company's state. The state on
 * date D is the base with the changes of the days epoch..D applied in order, so it costs one
 * step per change that happened, not one per day; nothing is stored between calls. Each day also
 * registers a few new companies (indices from NEW_INDEX_BASE up).
 *
 * Identifiers are unique by construction: NIP, REGON and KRS are keyed permutations
 * (Feistel networks) of the company index, so no two companies of one seed share any.
 */

export interface SyntheticSourceOptions {
  /** Any number or string; `7` and `'7'` give the same registry. */
  seed?: number | string;
  /** Companies registered before the epoch (indices 0..size-1). */
  size?: number;
  /** YYYY-MM-DD: the base state's date; changes happen on the days after it. */
  epoch?: string;
}

export interface SyntheticSource extends RegistrySource {
  readonly name: 'synthetic';
  readonly seed: string;
  readonly size: number;
  readonly epoch: string;
  /**
   * The day's changed companies in their state on `date`, then the companies registered that
   * day. Empty on and before the epoch.
   */
  snapshotsForDate(date: string, options?: { signal?: AbortSignal }): AsyncIterable<CompanySnapshot>;
  /**
   * The `size` base companies in their state on `date`; with `includeRegistered`, also every
   * company registered after the epoch up to `date`.
   */
  allSnapshots(date: string, options?: { signal?: AbortSignal; includeRegistered?: boolean }): AsyncIterable<CompanySnapshot>;
  /** One company on `date`; null when index `index` is not registered (yet). */
  snapshotOf(index: number, date: string): CompanySnapshot | null;
}

export const SYNTHETIC_DEFAULTS = Object.freeze({ seed: 1, size: 10_000, epoch: '2026-01-01' });
export const SYNTHETIC_MAX_SIZE = 10_000_000;

/** Companies registered after the epoch: index = NEW_INDEX_BASE + day * NEW_SLOTS_PER_DAY + j. */
export const NEW_INDEX_BASE = 50_000_000;
const NEW_SLOTS_PER_DAY = 1024;
const MAX_DAYS = 36_500;
/** New registrations a day, as a share of `size` (CEIDG + KRS: ~0.03 % of live entities a day). */
const NEW_PER_DAY_SHARE = 0.0003;
/** Sole traders registered with a future start date wait in this status until it comes. */
const PENDING_SHARE = 0.25;

const UINT32 = 4_294_967_296;
// A company's daily chance of a change depends on its starting condition: companies in
// proceedings or suspended have an end to reach, so they move faster than active ones.
// Stored as log(1 - p), the step of the geometric gaps between a company's change days.
const LOG_KEEP_ACTIVE = Math.log(1 - 0.0042);
const LOG_KEEP_SUSPENDED = Math.log(1 - 0.012);
const LOG_KEEP_PROCEEDINGS = Math.log(1 - 0.03);

const SALT = {
  form: 0x1b873593,
  condition: 0x2f4a9c71,
  base: 0x68e31da4,
  change: 0x5bd1e995,
  kind: 0x7a4f6c2d,
  newCount: 0x3c6ef372,
  pending: 0x0b4611a6,
  nip: 0x6d2b79f5,
  regon: 0x4cf5ad43,
  krs: 0x2545f491,
} as const;

// ---------------------------------------------------------------------------------------------
// Hashing and randomness

/** A 32-bit avalanche mix (lowbias32); a bijection, so distinct inputs never collide. */
function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

function hash2(a: number, b: number): number {
  return mix((mix(a) ^ b) + 0x9e3779b9);
}

function hash3(a: number, b: number, c: number): number {
  return mix((hash2(a, b) ^ c) + 0x7f4a7c15);
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h >>> 0);
}

/**
 * mulberry32: small, fast, good enough for test data. A class rather than closures because one is
 * made per company and per change, and per-instance closures cost more than the generation itself.
 */
class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0;
  }
  next(): number {
    const a = (this.state = (this.state + 0x6d2b79f5) | 0);
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / UINT32;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

function createRng(seed: number): Rng {
  return new Rng(seed);
}

/** Index into cumulative weights. */
function pickWeighted(cumulative: Float64Array, u: number): number {
  const target = u * cumulative[cumulative.length - 1]!;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid]! > target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function cumulativeOf(weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length);
  let sum = 0;
  for (let i = 0; i < weights.length; i++) out[i] = sum += weights[i]!;
  return out;
}

/** A keyed bijection on [0, 2^bits) (bits even), by a four-round Feistel network. */
function feistel(x: number, bits: number, key: number): number {
  const half = bits >>> 1;
  const mask = (1 << half) - 1;
  let left = x >>> half;
  let right = x & mask;
  for (let round = 0; round < 4; round++) {
    const f = hash2(key + round, right) & mask;
    const next = left ^ f;
    left = right;
    right = next;
  }
  return left * (1 << half) + right;
}

/** A keyed bijection on [0, domain), by cycle-walking the Feistel network. */
function permute(x: number, domain: number, bits: number, key: number): number {
  let y = x;
  do y = feistel(y, bits, key);
  while (y >= domain);
  return y;
}

// ---------------------------------------------------------------------------------------------
// Identifiers

const NIP_DOMAIN = 810_000_000; // 9 × 10^8 nine-digit prefixes starting 1..9, 9 check-valid endings each
/** Each NIP change moves the company to another slice of the NIP domain. */
const NIP_VERSION_STRIDE = 100_000_000;
const MAX_NIP_VERSION = 7;

function nipFor(seedHash: number, index: number, version: number): string {
  const k = permute(index + version * NIP_VERSION_STRIDE, NIP_DOMAIN, 30, seedHash ^ SALT.nip);
  const prefix = String(10_000_000 + Math.floor(k / 9));
  let wanted = k % 9;
  // Exactly one ninth digit at most makes the checksum 10 (no NIP); take the wanted-th of the others.
  for (let d = 0; d <= 9; d++) {
    const check = nipCheckDigit(prefix + d);
    if (check === null) continue;
    if (wanted-- === 0) return `${prefix}${d}${check}`;
  }
  throw new Error('unreachable: a NIP prefix always has nine valid endings');
}

function regonFor(seedHash: number, index: number): string {
  // REGON 000000000 passes the checksum but is never issued, hence 1..10^8-1.
  const body = String(1 + permute(index, 99_999_999, 28, seedHash ^ SALT.regon)).padStart(8, '0');
  return body + regon9CheckDigit(body);
}

function newBankAccount(rng: Rng): string {
  return bankAccount(rng, tables());
}

function regon14For(regon9: string, unitNumber: number): string {
  const body = regon9 + String(unitNumber).padStart(4, '0');
  return body + regon14CheckDigit(body);
}

/**
 * KRS numbers: base companies below 2^20 get a permutation of 1..2^20 (KRS numbers in use are
 * up to about 1.2 million); companies registered later get increasing numbers from 1,100,000,
 * and transformations into a KRS form get numbers from 50,000,000. All ranges are disjoint.
 */
function krsFor(seedHash: number, index: number): string {
  let n: number;
  if (index >= NEW_INDEX_BASE) n = 1_100_000 + (index - NEW_INDEX_BASE);
  else if (index < 1 << 20) n = 1 + permute(index, 1 << 20, 20, seedHash ^ SALT.krs);
  else n = 200_000_000 + index;
  return String(n).padStart(10, '0');
}

function transformedKrsFor(index: number): string {
  return String(50_000_000 + (index % NEW_INDEX_BASE) + (index >= NEW_INDEX_BASE ? 100_000_000 : 0)).padStart(10, '0');
}

/** NRB: 2 check digits, 8-digit sort code (bank, branch, check digit), 16-digit account. */
function bankAccount(rng: Rng, tables: Tables): string {
  const bank = Number(words.BANKS[pickWeighted(tables.bankWeights, rng.next())]![0]);
  const sortBody = bank * 10_000 + rng.int(10_000); // seven digits: bank, branch
  // Sort code check digit: weights 3 9 7 1 3 9 7, here applied from the last digit backwards.
  let sum = 0;
  let rest = sortBody;
  for (const weight of SORT_CODE_WEIGHTS_REVERSED) {
    sum += (rest % 10) * weight;
    rest = Math.floor(rest / 10);
  }
  const sortCode = sortBody * 10 + ((10 - (sum % 10)) % 10);
  const high = rng.int(100_000_000);
  const low = rng.int(100_000_000);
  // IBAN check over the BBAN followed by "PL00" as digits (P=25, L=21), mod 97 in exact chunks.
  let rem = sortCode % 97;
  rem = (rem * 100_000_000 + high) % 97;
  rem = (rem * 100_000_000 + low) % 97;
  rem = (rem * 1_000_000 + 252_100) % 97;
  return String(98 - rem).padStart(2, '0') + pad8(sortCode) + pad8(high) + pad8(low);
}

const SORT_CODE_WEIGHTS_REVERSED = [7, 9, 3, 1, 7, 9, 3] as const;

function pad8(n: number): string {
  return String(n).padStart(8, '0');
}

// ---------------------------------------------------------------------------------------------
// Dates

const DAY_MS = 86_400_000;

function parseDay(date: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (new Date(t).toISOString().slice(0, 10) !== date) throw new RangeError(`not a real date: ${date}`);
  return t / DAY_MS;
}

/** Days since 1970-01-01 to `YYYY-MM-DD` (Hinnant's civil-from-days; Date is slow in this loop). */
function formatDay(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

const PKD_2025_DAY = parseDay('2025-01-01');
const KRS_START_DAY = parseDay('2001-01-01');
const PSA_START_DAY = parseDay('2021-07-01');

// ---------------------------------------------------------------------------------------------
// Legal forms

type FormKind = 'jdg' | 'civil' | 'capital' | 'partnership' | 'foundation' | 'association' | 'coop';
type Phase = 'active' | 'pending' | 'suspended' | 'liquidation' | 'bankruptcy' | 'restructuring' | 'closed';

interface FormSpec {
  slug: string;
  kind: FormKind;
  /** Share of the registry, in percent. */
  weight: number;
  /** Starting conditions other than active, with their probabilities. */
  conditions: ReadonlyArray<readonly [Phase, number]>;
}

const FORM_SPECS: readonly FormSpec[] = [
  { slug: 'jdg', kind: 'jdg', weight: 70, conditions: [['suspended', 0.07]] },
  { slug: 'sp-z-oo', kind: 'capital', weight: 17, conditions: [['liquidation', 0.02], ['bankruptcy', 0.006], ['restructuring', 0.006], ['suspended', 0.015]] },
  { slug: 'spolka-cywilna', kind: 'civil', weight: 5, conditions: [['suspended', 0.04]] },
  { slug: 'stowarzyszenie', kind: 'association', weight: 2.2, conditions: [['liquidation', 0.015]] },
  { slug: 'fundacja', kind: 'foundation', weight: 1.2, conditions: [['liquidation', 0.015]] },
  { slug: 'spolka-komandytowa', kind: 'partnership', weight: 1.2, conditions: [['liquidation', 0.015], ['bankruptcy', 0.004], ['restructuring', 0.004], ['suspended', 0.01]] },
  { slug: 'spolka-jawna', kind: 'partnership', weight: 0.9, conditions: [['liquidation', 0.015], ['bankruptcy', 0.004], ['restructuring', 0.003], ['suspended', 0.01]] },
  { slug: 'spoldzielnia', kind: 'coop', weight: 0.4, conditions: [['liquidation', 0.03], ['bankruptcy', 0.01], ['restructuring', 0.006]] },
  { slug: 'sa', kind: 'capital', weight: 0.3, conditions: [['liquidation', 0.015], ['bankruptcy', 0.006], ['restructuring', 0.008]] },
  { slug: 'psa', kind: 'capital', weight: 0.2, conditions: [['liquidation', 0.02], ['bankruptcy', 0.004], ['suspended', 0.01]] },
  { slug: 'spolka-partnerska', kind: 'partnership', weight: 0.15, conditions: [['liquidation', 0.01]] },
  { slug: 'spolka-komandytowo-akcyjna', kind: 'partnership', weight: 0.05, conditions: [['liquidation', 0.02], ['bankruptcy', 0.005]] },
];

/** Transformations that keep NIP and REGON (KSH art. 551, art. 26 §4). */
const TRANSFORMS: Readonly<Record<string, readonly string[]>> = {
  'jdg': ['sp-z-oo'],
  'spolka-cywilna': ['spolka-jawna'],
  'spolka-jawna': ['sp-z-oo', 'spolka-komandytowa'],
  'spolka-komandytowa': ['sp-z-oo'],
  'sp-z-oo': ['sa', 'psa'],
  'psa': ['sp-z-oo'],
};

const KRS_KINDS: ReadonlySet<FormKind> = new Set(['capital', 'partnership', 'foundation', 'association', 'coop']);
const PROCEEDINGS_KINDS: ReadonlySet<FormKind> = new Set(['capital', 'partnership', 'coop']);
const SUSPENDABLE_KINDS: ReadonlySet<FormKind> = new Set(['jdg', 'civil', 'capital', 'partnership']);

const STATUS = {
  active: 'aktywny',
  pending: 'oczekuje na rozpoczęcie działalności',
  suspended: 'zawieszony',
  liquidation: 'w likwidacji',
  bankruptcy: 'w upadłości',
  deleted: 'wykreślony',
} as const;

const PROCEEDINGS_SUFFIX: Partial<Record<Phase, string>> = {
  liquidation: 'W LIKWIDACJI',
  bankruptcy: 'W UPADŁOŚCI',
  restructuring: 'W RESTRUKTURYZACJI',
};

const VAT = { active: 'Czynny', exempt: 'Zwolniony', none: 'Niezarejestrowany' } as const;

// ---------------------------------------------------------------------------------------------
// Tables built once from the dictionaries

interface Tables {
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

function tables(): Tables {
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
    postalRanges: new Map(cityList.map((c) => [c, [Number(c.postal_from.replace('-', '')), Number(c.postal_to.replace('-', ''))] as const])),
    renamedCodes: renamed,
  };
  return tablesCache;
}

// ---------------------------------------------------------------------------------------------
// Company state

interface Context {
  seedHash: number;
  size: number;
  epochDay: number;
}

/** What a company is made of while its days are replayed; becomes a CompanySnapshot at the end. */
interface State {
  index: number;
  formIndex: number;
  phase: Phase;
  /** The name without the legal-form suffix. */
  stem: string;
  /** Written after the legal form (partners of a civil partnership). */
  tail: string;
  abbreviated: boolean;
  trade: Trade;
  pkdVersion: PkdVersion;
  nip: string;
  nipVersion: number;
  regon: string;
  krs: string | null;
  status: string;
  /** Day (relative to the epoch) a pending sole trader starts; -1 when not pending. */
  pendingStartDay: number;
  address: Address | null;
  city: City;
  units: LocalUnit[];
  unitSeq: number;
  contacts: Contact[];
  websites: string[];
  activities: Activity[];
  dates: DatedEntry[];
  vatStatus: string;
  bankAccounts: string[];
  persons: Person[];
  /** The last day (relative to the epoch) something changed. */
  lastChangeDay: number;
  /** Internet domain derived from the stem; computed on first use. */
  domain: string | null;
  domainStem: string;
}

function formOf(ctx: Context, index: number): number {
  return pickWeighted(tables().formWeights, hash2(ctx.seedHash ^ SALT.form, index) / UINT32);
}

/** The starting condition of a base company; derived from hashes only, so a scan can afford it. */
function baseConditionOf(ctx: Context, index: number, formIndex: number): Phase {
  const { phases, cumulative } = tables().conditionCumulative[formIndex]!;
  const u = hash2(ctx.seedHash ^ SALT.condition, index) / UINT32;
  for (let i = 0; i < phases.length; i++) if (u < cumulative[i]!) return phases[i]!;
  return 'active';
}

function logKeepOf(phase: Phase): number {
  if (phase === 'suspended') return LOG_KEEP_SUSPENDED;
  if (phase === 'liquidation' || phase === 'bankruptcy' || phase === 'restructuring') return LOG_KEEP_PROCEEDINGS;
  return LOG_KEEP_ACTIVE;
}

/**
 * The days a company changes on: a fixed sequence per company with geometric gaps (a daily
 * chance p, set by its starting condition). Walking it costs one step per change, not one per
 * day, so a state years after the epoch is as cheap as the changes it has had.
 */
class ChangeDays {
  private readonly rng: Rng;
  private readonly logKeep: number;
  /** The current change day (relative to the epoch). */
  day: number;
  constructor(ctx: Context, index: number, firstDay: number) {
    this.rng = new Rng(hash2(ctx.seedHash ^ SALT.change, index));
    this.logKeep = index >= NEW_INDEX_BASE ? LOG_KEEP_ACTIVE : logKeepOf(baseConditionOf(ctx, index, formOf(ctx, index)));
    this.day = firstDay - 1;
    this.advance();
  }
  advance(): number {
    this.day += 1 + Math.floor(Math.log(1 - this.rng.next()) / this.logKeep);
    return this.day;
  }
}

/** Whether company `index` (first able to change on `firstDay`) has a change day on `day`. */
function changesOn(ctx: Context, index: number, firstDay: number, day: number): boolean {
  const days = new ChangeDays(ctx, index, firstDay);
  while (days.day < day) days.advance();
  return days.day === day;
}

function newCompaniesOn(ctx: Context, day: number): number {
  if (day < 1 || day >= MAX_DAYS) return 0;
  const expected = ctx.size * NEW_PER_DAY_SHARE;
  const whole = Math.floor(expected);
  const extra = hash2(ctx.seedHash ^ SALT.newCount, day) / UINT32 < expected - whole ? 1 : 0;
  return Math.min(NEW_SLOTS_PER_DAY, whole + extra);
}

function registrationDayOf(index: number): number {
  return Math.floor((index - NEW_INDEX_BASE) / NEW_SLOTS_PER_DAY);
}

/** For a new sole trader registered with a future start: days until it starts (1..14), else 0. */
function pendingDelayOf(ctx: Context, index: number, formIndex: number): number {
  if (index < NEW_INDEX_BASE || tables().forms[formIndex]!.kind !== 'jdg') return 0;
  const h = hash2(ctx.seedHash ^ SALT.pending, index);
  return h / UINT32 < PENDING_SHARE ? 1 + (h % 14) : 0;
}

// ---------------------------------------------------------------------------------------------
// Text helpers

const ASCII_FOLD: Readonly<Record<string, string>> = { 'ą': 'a', 'ć': 'c', 'ę': 'e', 'ł': 'l', 'ń': 'n', 'ó': 'o', 'ś': 's', 'ź': 'z', 'ż': 'z' };

const slugCache = new Map<string, string>();

/** `slug` of a name from the word lists; they are few, so each is folded once. */
function nameSlug(s: string): string {
  let cached = slugCache.get(s);
  if (cached === undefined) slugCache.set(s, (cached = slug(s)));
  return cached;
}

/** `Kowalski Budownictwo` → `kowalski-budownictwo`. */
function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[ąćęłńóśźż]/g, (c) => ASCII_FOLD[c]!)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
}

function mobilePhone(rng: Rng): string {
  const n = String(rng.int(1_000_000)).padStart(6, '0');
  return `+48 ${rng.pick(words.MOBILE_PREFIXES)} ${n.slice(0, 3)} ${n.slice(3)}`;
}

function landlinePhone(rng: Rng, voivodeship: string): string {
  const area = rng.pick(words.AREA_CODES[voivodeship] ?? ['22']);
  const n = String(2_000_000 + rng.int(8_000_000));
  return `+48 ${area} ${n.slice(0, 3)} ${n.slice(3, 5)} ${n.slice(5)}`;
}

function brandName(rng: Rng): string {
  return rng.pick(words.BRAND_HEADS) + rng.pick(words.BRAND_TAILS);
}

interface PersonName {
  first: string;
  surname: string;
}

function personName(rng: Rng): PersonName {
  const female = rng.chance(0.45);
  const [male, fem] = rng.pick(words.SURNAMES);
  return { first: female ? rng.pick(words.FEMALE_FIRST_NAMES) : rng.pick(words.MALE_FIRST_NAMES), surname: female ? fem : male };
}

function fullName(p: PersonName): string {
  return `${p.first} ${p.surname}`;
}

/** A person not yet in the list (full names are how persons are told apart). */
function addPerson(rng: Rng, persons: Person[], role: string): Person {
  for (let attempt = 0; ; attempt++) {
    const name = fullName(personName(rng));
    const candidate = attempt < 20 ? name : `${name}-${words.SURNAMES[attempt % words.SURNAMES.length]![0]}`;
    if (!persons.some((p) => p.full_name === candidate)) {
      const person = { full_name: candidate, role };
      persons.push(person);
      return person;
    }
  }
}

function splitName(fullNameText: string): PersonName {
  const space = fullNameText.indexOf(' ');
  return { first: fullNameText.slice(0, space), surname: fullNameText.slice(space + 1) };
}

// ---------------------------------------------------------------------------------------------
// Building a base company

function pickCity(rng: Rng): City {
  const t = tables();
  return t.cities[pickWeighted(t.cityWeights, rng.next())]!;
}

function cityNear(rng: Rng, city: City): City {
  return rng.chance(0.6) ? city : rng.pick(tables().citiesByVoivodeship.get(city.voivodeship)!);
}

function postalCodeIn(rng: Rng, city: City): string {
  const [from, to] = tables().postalRanges.get(city)!;
  const code = String(from + rng.int(to - from + 1)).padStart(5, '0');
  return `${code.slice(0, 2)}-${code.slice(2)}`;
}

function makeAddress(rng: Rng, city: City, residential: boolean): Address {
  const street = rng.chance(0.1) ? rng.pick(words.AVENUES) : `ul. ${rng.pick(words.STREETS)}`;
  const number = 1 + Math.floor(rng.next() ** 2 * 150);
  const letter = rng.chance(0.12) ? rng.pick(['A', 'B', 'C']) : '';
  const apartment = rng.chance(residential ? 0.6 : 0.35) ? String(1 + rng.int(80)) : '';
  return {
    street,
    building: `${number}${letter}`,
    apartment,
    city: city.name,
    postal_code: postalCodeIn(rng, city),
    voivodeship: city.voivodeship,
    country_code: 'PL',
  };
}

function pickTrade(rng: Rng, kind: FormKind, slugName: string): Trade {
  const t = tables();
  if (kind === 'foundation') return words.NONPROFIT_TRADE;
  if (kind === 'association') return rng.chance(0.3) ? words.SPORTS_CLUB_TRADE : words.NONPROFIT_TRADE;
  if (kind === 'coop') return rng.chance(0.75) ? words.HOUSING_COOP_TRADE : words.FARM_COOP_TRADE;
  if (slugName === 'spolka-partnerska') {
    const professions = ['legal', 'accounting', 'architecture', 'doctor', 'dentist'];
    const key = rng.pick(professions);
    return words.TRADES.find((tr) => tr.key === key)!;
  }
  const weights = kind === 'jdg' ? t.jdgTradeWeights : t.companyTradeWeights;
  return words.TRADES[pickWeighted(weights, rng.next())]!;
}

function codesOf(trade: Trade, version: PkdVersion): readonly string[] {
  return version === 2025 ? trade.pkd2025 : trade.pkd2007;
}

function activity(code: string, version: PkdVersion, primary: boolean): Activity {
  return { code, name: tables().pkdNames[version].get(code) ?? pkdName(code, version) ?? '', is_primary: primary };
}

function makeActivities(rng: Rng, trade: Trade, version: PkdVersion): Activity[] {
  const codes = codesOf(trade, version);
  const primary = rng.chance(0.8) ? codes[0]! : rng.pick(codes);
  const list = [activity(primary, version, true)];
  const others = Math.floor(rng.next() ** 1.5 * 7); // 0..6, mostly few
  for (let i = 0; i < others; i++) {
    const code = rng.chance(0.92) ? rng.pick(codes) : rng.pick(tables().pkdPool[version]);
    if (!list.some((a) => a.code === code)) list.push(activity(code, version, false));
  }
  return list;
}

const COMPANY_ROLES = {
  board: 'PREZES ZARZĄDU',
  member: 'CZŁONEK ZARZĄDU',
  proxy: 'PROKURENT',
  supervisory: 'CZŁONEK RADY NADZORCZEJ',
  owner: 'WŁAŚCICIEL',
  attorney: 'PEŁNOMOCNIK',
  partner: 'WSPÓLNIK',
  professionalPartner: 'PARTNER',
  general: 'KOMPLEMENTARIUSZ',
  limited: 'KOMANDYTARIUSZ',
  liquidator: 'LIKWIDATOR',
  foundationBoard: 'PREZES ZARZĄDU FUNDACJI',
  foundationMember: 'CZŁONEK ZARZĄDU FUNDACJI',
  vicePresident: 'WICEPREZES ZARZĄDU',
  treasurer: 'SKARBNIK',
  secretary: 'SEKRETARZ',
} as const;

function addPersons(rng: Rng, persons: Person[], role: string, count: number): void {
  for (let i = 0; i < count; i++) addPerson(rng, persons, role);
}

function makePersons(rng: Rng, form: FormSpec): Person[] {
  const persons: Person[] = [];
  const R = COMPANY_ROLES;
  switch (form.kind) {
    case 'jdg':
      addPerson(rng, persons, R.owner);
      if (rng.chance(0.05)) addPerson(rng, persons, R.attorney);
      break;
    case 'civil':
      addPersons(rng, persons, R.partner, 2 + (rng.chance(0.2) ? 1 : 0));
      break;
    case 'capital':
      addPerson(rng, persons, R.board);
      addPersons(rng, persons, R.member, rng.int(form.slug === 'sp-z-oo' ? 3 : 4));
      if (rng.chance(0.3)) addPerson(rng, persons, R.proxy);
      if (form.slug === 'sa') addPersons(rng, persons, R.supervisory, 3 + rng.int(3));
      break;
    case 'partnership':
      if (form.slug === 'spolka-partnerska') addPersons(rng, persons, R.professionalPartner, 2 + rng.int(3));
      else if (form.slug === 'spolka-jawna') addPersons(rng, persons, R.partner, 2 + (rng.chance(0.3) ? 1 : 0));
      else {
        addPerson(rng, persons, R.general);
        addPersons(rng, persons, R.limited, 1 + rng.int(2));
      }
      break;
    case 'foundation':
      addPerson(rng, persons, R.foundationBoard);
      addPersons(rng, persons, R.foundationMember, rng.int(3));
      break;
    case 'association':
      addPerson(rng, persons, R.board);
      addPerson(rng, persons, R.vicePresident);
      if (rng.chance(0.5)) addPerson(rng, persons, R.treasurer);
      if (rng.chance(0.5)) addPerson(rng, persons, R.secretary);
      break;
    case 'coop':
      addPerson(rng, persons, R.board);
      addPersons(rng, persons, R.member, 1 + rng.int(2));
      break;
  }
  return persons;
}

/** The role a newly appointed person gets. */
function newPersonRole(rng: Rng, s: State): string {
  const form = tables().forms[s.formIndex]!;
  const R = COMPANY_ROLES;
  if (s.phase === 'liquidation') return R.liquidator;
  switch (form.kind) {
    case 'jdg':
      return R.attorney;
    case 'civil':
      return R.partner;
    case 'capital':
      return form.slug === 'sa' ? rng.pick([R.member, R.proxy, R.supervisory]) : rng.pick([R.member, R.member, R.proxy]);
    case 'partnership':
      return form.slug === 'spolka-partnerska' ? R.professionalPartner : form.slug === 'spolka-jawna' ? R.partner : rng.pick([R.limited, R.proxy]);
    case 'foundation':
      return R.foundationMember;
    case 'association':
      return rng.pick([R.member, R.treasurer, R.secretary]);
    case 'coop':
      return R.member;
  }
}

/** The name without the legal form; the sole trader's and partners' names come from `persons`. */
function makeStem(rng: Rng, form: FormSpec, trade: Trade, persons: readonly Person[], city: City): string {
  switch (form.kind) {
    case 'jdg': {
      const owner = persons[0]!.full_name;
      const desc = rng.pick(trade.jdgNames);
      const u = rng.next();
      if (u < 0.45) return `${owner} ${desc}`;
      if (u < 0.65) return `${desc} ${owner}`;
      if (u < 0.8) return owner;
      return `${desc} "${brandName(rng)}" ${owner}`;
    }
    case 'civil':
      return rng.chance(0.5) ? `${rng.pick(['PHU', 'PPHU', 'FHU', 'PUH'])} ${brandName(rng)}` : `${brandName(rng)} ${rng.pick(trade.companyWords)}`;
    case 'foundation':
      return `FUNDACJA ${rng.pick(words.FOUNDATION_NAMES)}`;
    case 'association':
      return trade === words.SPORTS_CLUB_TRADE
        ? `${rng.pick(words.SPORTS_CLUB_PREFIXES)} ${rng.pick(words.SPORTS_CLUB_NAMES)} ${city.name.toUpperCase()}`
        : rng.pick(words.ASSOCIATION_NAMES);
    case 'coop':
      return trade === words.HOUSING_COOP_TRADE ? rng.pick(words.COOPERATIVE_NAMES) : rng.pick(words.FARM_COOPERATIVE_NAMES);
    case 'partnership':
      if (form.slug === 'spolka-jawna' || form.slug === 'spolka-partnerska') {
        const surnames = persons.map((p) => splitName(p.full_name).surname.toUpperCase());
        const joined = surnames.length > 2 ? `${surnames[0]}, ${surnames[1]} I WSPÓLNICY` : `${surnames[0]} I ${surnames[1] ?? 'WSPÓLNICY'}`;
        if (form.slug === 'spolka-partnerska') {
          const prefix = trade.key === 'legal' ? rng.pick(['KANCELARIA ADWOKACKA', 'KANCELARIA RADCÓW PRAWNYCH']) : trade.key === 'accounting' ? 'KANCELARIA DORADCÓW PODATKOWYCH' : trade.key === 'architecture' ? 'PRACOWNIA ARCHITEKTONICZNA' : trade.key === 'dentist' ? 'GABINET STOMATOLOGICZNY' : 'PRAKTYKA LEKARSKA';
          return `${prefix} ${joined}`;
        }
        return rng.chance(0.6) ? joined : `${brandName(rng)} ${joined}`;
      }
      return companyStem(rng, trade, persons) + (rng.chance(0.4) ? ' SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ' : '');
    case 'capital':
      return companyStem(rng, trade, persons);
  }
}

function companyStem(rng: Rng, trade: Trade, persons: readonly Person[]): string {
  const u = rng.next();
  if (u < 0.3) return `${splitName(persons[0]!.full_name).surname.toUpperCase()} ${rng.pick(trade.companyWords)}`;
  if (u < 0.65) return brandName(rng);
  if (u < 0.85) return `${brandName(rng)} ${rng.pick(trade.companyWords)}`;
  return `${brandName(rng)} ${rng.pick(words.BRAND_WORDS)}`;
}

function nameOf(s: State): string {
  const form = tables().forms[s.formIndex]!;
  const parts = [s.stem];
  if (form.kind === 'capital' || form.kind === 'partnership' || form.kind === 'civil') {
    parts.push(s.abbreviated && form.legal.abbreviation ? form.legal.abbreviation : form.legal.label);
  }
  if (s.tail) parts.push(s.tail);
  const suffix = PROCEEDINGS_SUFFIX[s.phase];
  if (suffix) parts.push(suffix);
  return parts.join(' ');
}

function domainOf(s: State): string {
  if (s.domain === null || s.domainStem !== s.stem) {
    const base = slug(s.stem.replace(/"/g, '')) || 'firma';
    s.domain = `${base}${s.index % 10 === 7 ? '.com.pl' : s.index % 10 === 3 ? '.eu' : '.pl'}`;
    s.domainStem = s.stem;
  }
  return s.domain;
}

function companyEmail(rng: Rng, s: State): string {
  const form = tables().forms[s.formIndex]!;
  if (form.kind === 'jdg' && rng.chance(0.6)) {
    const owner = splitName(s.persons[0]!.full_name);
    const local = `${nameSlug(owner.first)}.${nameSlug(owner.surname)}${rng.chance(0.4) ? rng.int(100) : ''}`;
    return `${local}@${rng.pick(words.EMAIL_PROVIDERS)}`;
  }
  return `${rng.pick(words.BUSINESS_MAILBOXES)}@${domainOf(s)}`;
}

function website(rng: Rng, s: State): string {
  return rng.chance(0.8) ? `https://www.${domainOf(s)}` : `https://${rng.pick(['sklep', 'oferta', 'www2', 'portal'])}.${domainOf(s)}`;
}

function phone(rng: Rng, s: State): string {
  return rng.chance(0.7) ? mobilePhone(rng) : landlinePhone(rng, s.city.voivodeship);
}

function setDate(dates: DatedEntry[], type: DateType, date: string): void {
  const existing = dates.find((d) => d.type === type);
  if (existing) existing.date = date;
  else dates.push({ type, date });
}

function getDate(dates: readonly DatedEntry[], type: DateType): string | null {
  return dates.find((d) => d.type === type)?.date ?? null;
}

function generateBase(ctx: Context, index: number): State {
  const t = tables();
  const rng = createRng(hash2(ctx.seedHash ^ SALT.base, index));
  const formIndex = formOf(ctx, index);
  const form = t.forms[formIndex]!;
  const isNew = index >= NEW_INDEX_BASE;

  // Dates: base companies started up to 30 years before the epoch, more of them recently.
  let registrationDay: number;
  let startDay: number;
  let pendingStartDay = -1;
  if (isNew) {
    const day = registrationDayOf(index);
    registrationDay = ctx.epochDay + day;
    const delay = pendingDelayOf(ctx, index, formIndex);
    startDay = registrationDay + delay;
    if (delay > 0) pendingStartDay = day + delay;
  } else {
    startDay = ctx.epochDay - 1 - Math.floor(rng.next() ** 1.7 * 30 * 365);
    registrationDay = startDay;
    if (KRS_KINDS.has(form.kind) && registrationDay < KRS_START_DAY) registrationDay = KRS_START_DAY + rng.int(730);
    if (form.slug === 'psa' && startDay < PSA_START_DAY) startDay = registrationDay = PSA_START_DAY + rng.int(Math.max(1, ctx.epochDay - PSA_START_DAY - 1));
    if (form.kind === 'jdg' && rng.chance(0.3)) startDay = registrationDay + rng.int(10);
    if (startDay >= ctx.epochDay) startDay = ctx.epochDay - 1;
  }
  const pkdVersion: PkdVersion = registrationDay >= PKD_2025_DAY ? 2025 : 2007;
  const trade = pickTrade(rng, form.kind, form.slug);
  const persons = makePersons(rng, form);
  const city = pickCity(rng);
  const residential = form.kind === 'jdg';

  const state: State = {
    index,
    formIndex,
    phase: isNew ? (pendingStartDay >= 0 ? 'pending' : 'active') : baseConditionOf(ctx, index, formIndex),
    stem: '',
    tail: '',
    abbreviated: rng.chance(0.3),
    trade,
    pkdVersion,
    nip: nipFor(ctx.seedHash, index, 0),
    nipVersion: 0,
    regon: regonFor(ctx.seedHash, index),
    krs: form.legal.register === 'krs' ? krsFor(ctx.seedHash, index) : null,
    status: STATUS.active,
    pendingStartDay,
    address: rng.chance(residential ? 0.03 : 0.01) ? null : makeAddress(rng, city, residential),
    city,
    units: [],
    unitSeq: 0,
    contacts: [],
    websites: [],
    activities: makeActivities(rng, trade, pkdVersion),
    dates: [],
    vatStatus: VAT.active,
    bankAccounts: [],
    persons,
    lastChangeDay: -1,
    domain: null,
    domainStem: '',
  };
  state.stem = makeStem(rng, form, trade, persons, city);
  if (form.kind === 'civil') state.tail = persons.map((p) => p.full_name.toUpperCase()).join(', ');

  if (rng.chance(0.85)) state.contacts.push({ type: 'phone', value: phone(rng, state) });
  if (rng.chance(0.15)) state.contacts.push({ type: 'phone', value: mobilePhone(rng) });
  if (rng.chance(form.kind === 'jdg' ? 0.7 : 0.8)) state.contacts.push({ type: 'email', value: companyEmail(rng, state) });
  if (form.kind !== 'jdg' && rng.chance(0.04)) state.contacts.push({ type: 'fax', value: landlinePhone(rng, city.voivodeship) });
  if (rng.chance(form.kind === 'jdg' ? 0.2 : 0.55)) state.websites.push(website(rng, state));

  const unitChance = form.kind === 'jdg' ? 0.05 : form.kind === 'capital' || form.kind === 'coop' ? 0.22 : 0.1;
  if (rng.chance(unitChance)) {
    const count = 1 + Math.floor(rng.next() ** 2 * 3);
    for (let i = 0; i < count; i++) state.units.push(makeUnit(rng, state, formatDay(startDay + rng.int(Math.max(1, ctx.epochDay - startDay)))));
  }

  const u = rng.next();
  if (form.kind === 'jdg') state.vatStatus = u < 0.55 ? VAT.active : u < 0.9 ? VAT.exempt : VAT.none;
  else if (form.kind === 'foundation' || form.kind === 'association') state.vatStatus = u < 0.2 ? VAT.active : u < 0.6 ? VAT.exempt : VAT.none;
  else state.vatStatus = u < 0.9 ? VAT.active : u < 0.95 ? VAT.exempt : VAT.none;
  if (state.vatStatus !== VAT.none) {
    const v = rng.next();
    const count = v < 0.7 ? 1 : v < 0.92 ? 2 : 3;
    for (let i = 0; i < count; i++) state.bankAccounts.push(bankAccount(rng, t));
  }

  state.dates.push({ type: 'registration', date: formatDay(registrationDay) });
  state.dates.push({ type: 'activity_start', date: formatDay(startDay) });
  if (state.phase === 'pending') state.status = STATUS.pending;
  else if (state.phase !== 'active') {
    // Entered its condition within the last two years before the epoch, after it started.
    const since = Math.max(startDay + 1, ctx.epochDay - 730);
    const day = formatDay(since + rng.int(Math.max(1, ctx.epochDay - since)));
    if (state.phase === 'suspended') {
      setDate(state.dates, 'suspension', day);
      state.status = STATUS.suspended;
    } else if (state.phase === 'liquidation') {
      setDate(state.dates, 'liquidation_start', day);
      state.status = STATUS.liquidation;
      addPerson(rng, state.persons, COMPANY_ROLES.liquidator);
    } else if (state.phase === 'bankruptcy') {
      setDate(state.dates, 'bankruptcy_start', day);
      state.status = STATUS.bankruptcy;
    } else if (state.phase === 'restructuring') {
      setDate(state.dates, 'restructuring_start', day);
    }
  }
  return state;
}

function makeUnit(rng: Rng, s: State, openedOn: string): LocalUnit {
  const city = cityNear(rng, s.city);
  s.unitSeq += 1;
  return {
    identifier: regon14For(s.regon, s.unitSeq),
    name: `${rng.pick(words.UNIT_KINDS)} ${city.name}`,
    address: makeAddress(rng, city, false),
    dates: [{ type: 'activity_start', date: openedOn }],
  };
}

// ---------------------------------------------------------------------------------------------
// Daily changes

type ChangeKind =
  | 'phone' | 'email' | 'website' | 'personAdded' | 'personRemoved' | 'addressChanged' | 'addressAdded'
  | 'activitiesAdded' | 'activitiesRemoved' | 'activitiesRenamed' | 'mainActivity' | 'bankAccounts' | 'vatStatus'
  | 'unitOpened' | 'unitClosed' | 'name' | 'legalForm' | 'nip' | 'suspension' | 'resumption' | 'closure' | 'startDate'
  | 'liquidationStart' | 'liquidationEnd' | 'bankruptcyStart' | 'bankruptcyEnd' | 'restructuringStart' | 'restructuringEnd';

type WeightTable = ReadonlyArray<readonly [ChangeKind, number]>;

/**
 * How often each change happens, by phase. Contacts and persons are common, insolvency is rare;
 * a phase with an end (suspension, proceedings) mostly moves towards it. Insolvency is several
 * times more frequent than in the real registries, so that a month of a 20,000-company registry
 * shows every event type.
 */
const CHANGE_WEIGHTS: Readonly<Record<Exclude<Phase, 'closed'>, WeightTable>> = {
  active: [
    ['phone', 120], ['email', 110], ['website', 60], ['personAdded', 70], ['personRemoved', 45],
    ['addressChanged', 70], ['addressAdded', 400], ['activitiesAdded', 55], ['activitiesRemoved', 35],
    ['activitiesRenamed', 30], ['mainActivity', 30], ['bankAccounts', 45], ['vatStatus', 30], ['unitOpened', 25],
    ['unitClosed', 60], ['name', 22], ['legalForm', 8], ['nip', 5], ['suspension', 30], ['closure', 18],
    ['startDate', 12], ['liquidationStart', 18], ['bankruptcyStart', 16], ['restructuringStart', 20],
  ],
  pending: [['phone', 100], ['email', 100], ['website', 50]],
  suspended: [
    ['resumption', 400], ['closure', 60], ['phone', 40], ['email', 40], ['vatStatus', 50], ['bankAccounts', 20],
    ['addressChanged', 20], ['addressAdded', 100], ['personAdded', 10],
  ],
  liquidation: [
    ['liquidationEnd', 350], ['personAdded', 60], ['personRemoved', 40], ['addressChanged', 30], ['addressAdded', 100],
    ['bankAccounts', 30], ['vatStatus', 60], ['phone', 30], ['email', 30], ['unitClosed', 60],
  ],
  bankruptcy: [
    ['bankruptcyEnd', 350], ['vatStatus', 80], ['bankAccounts', 40], ['addressChanged', 20], ['personRemoved', 30], ['unitClosed', 50],
  ],
  restructuring: [
    ['restructuringEnd', 300], ['phone', 40], ['email', 40], ['website', 40], ['personAdded', 30], ['personRemoved', 20],
    ['bankAccounts', 30], ['activitiesAdded', 20], ['addressChanged', 20], ['vatStatus', 10],
  ],
};

/** Whether a change can happen to this company now, and its weight relative to the table's. */
function weightFactor(kind: ChangeKind, s: State): number {
  const form = tables().forms[s.formIndex]!;
  switch (kind) {
    case 'personRemoved':
      return s.persons.length >= 2 ? 1 : 0;
    case 'addressChanged':
      return s.address !== null ? 1 : 0;
    case 'addressAdded':
      return s.address === null ? 1 : 0;
    case 'activitiesRemoved':
      return s.activities.length >= 2 ? 1 : 0;
    case 'activitiesRenamed':
      return staleActivity(s) >= 0 ? 1 : 0;
    case 'bankAccounts':
      return s.vatStatus !== VAT.none ? 1 : 0;
    case 'unitClosed':
      return s.units.some(isUnitOpen) ? 1 : 0;
    case 'legalForm':
      return TRANSFORMS[form.slug] ? (form.kind === 'jdg' ? 0.4 : 1) : 0;
    case 'nip':
      return s.nipVersion < MAX_NIP_VERSION ? 1 : 0;
    case 'suspension':
      return SUSPENDABLE_KINDS.has(form.kind) ? (form.kind === 'jdg' || form.kind === 'civil' ? 1 : 0.2) : 0;
    case 'closure':
      return form.kind === 'jdg' || form.kind === 'civil' ? 1 : 0.25;
    case 'liquidationStart':
      return KRS_KINDS.has(form.kind) ? 1 : 0;
    case 'bankruptcyStart':
    case 'restructuringStart':
      return PROCEEDINGS_KINDS.has(form.kind) ? 1 : 0;
    default:
      return 1;
  }
}

function staleActivity(s: State): number {
  if (s.pkdVersion !== 2007) return -1;
  const { renamedCodes, pkdNames } = tables();
  for (let i = 0; i < s.activities.length; i++) {
    const a = s.activities[i]!;
    if (renamedCodes.has(a.code) && a.name !== pkdNames[2025].get(a.code)) return i;
  }
  return -1;
}

function isUnitOpen(u: LocalUnit): boolean {
  for (const d of u.dates) if (d.type === 'closure') return false;
  return true;
}

function openUnits(s: State): LocalUnit[] {
  return s.units.filter(isUnitOpen);
}

/** Scratch space for chooseChange; generation is synchronous, so one buffer serves every call. */
const cumulativeScratch = new Float64Array(64);

function chooseChange(rng: Rng, s: State): ChangeKind | null {
  if (s.phase === 'closed') return null;
  const table = CHANGE_WEIGHTS[s.phase];
  let total = 0;
  const weights = cumulativeScratch;
  for (let i = 0; i < table.length; i++) {
    const [kind, weight] = table[i]!;
    total += weight * weightFactor(kind, s);
    weights[i] = total;
  }
  if (total === 0) return null;
  const target = rng.next() * total;
  for (let i = 0; i < table.length; i++) if (weights[i]! > target) return table[i]![0];
  return table[table.length - 1]![0];
}

type ValueMaker = (rng: Rng, s: State) => string;

/** Replaces, adds or removes one value of a contact-like list so that the list differs. */
function changeValues(rng: Rng, s: State, values: readonly string[], make: ValueMaker, max: number): string[] {
  const next = [...values];
  const u = rng.next();
  if (next.length === 0 || (u < 0.25 && next.length < max)) next.push(freshValue(rng, s, next, make));
  else if (u < 0.4) next.splice(rng.int(next.length), 1);
  else next[rng.int(next.length)] = freshValue(rng, s, next, make);
  return next;
}

function freshValue(rng: Rng, s: State, taken: readonly string[], make: ValueMaker): string {
  for (let i = 0; i < 10; i++) {
    const v = make(rng, s);
    if (!taken.includes(v)) return v;
  }
  return `${make(rng, s)}${rng.int(10)}`;
}

function replaceContacts(s: State, type: ContactType, values: string[]): void {
  const others = s.contacts.filter((c) => c.type !== type);
  s.contacts = [...others, ...values.map((value) => ({ type, value }))];
}

function contactValues(s: State, type: ContactType): string[] {
  return s.contacts.filter((c) => c.type === type).map((c) => c.value);
}

function sameAddress(a: Address | null, b: Address): boolean {
  return a !== null && a.street === b.street && a.building === b.building && a.apartment === b.apartment && a.postal_code === b.postal_code && a.city === b.city;
}

function closeCompany(s: State, date: string, closureDate: string | null): void {
  if (closureDate) setDate(s.dates, 'closure', closureDate);
  setDate(s.dates, 'deletion', date);
  s.status = STATUS.deleted;
  s.phase = 'closed';
}

function applyChange(rng: Rng, s: State, kind: ChangeKind, day: number, ctx: Context): void {
  const date = formatDay(ctx.epochDay + day);
  const t = tables();
  const form = t.forms[s.formIndex]!;
  switch (kind) {
    case 'phone':
      replaceContacts(s, 'phone', changeValues(rng, s, contactValues(s, 'phone'), phone, 3));
      break;
    case 'email':
      replaceContacts(s, 'email', changeValues(rng, s, contactValues(s, 'email'), companyEmail, 2));
      break;
    case 'website':
      s.websites = changeValues(rng, s, s.websites, website, 2);
      break;
    case 'personAdded':
      addPerson(rng, s.persons, newPersonRole(rng, s));
      break;
    case 'personRemoved':
      s.persons.splice(1 + rng.int(s.persons.length - 1), 1);
      break;
    case 'addressAdded':
    case 'addressChanged': {
      const city = s.address === null || rng.chance(0.3) ? pickCity(rng) : s.city;
      let address = makeAddress(rng, city, form.kind === 'jdg');
      while (sameAddress(s.address, address)) address = makeAddress(rng, city, form.kind === 'jdg');
      s.address = address;
      s.city = city;
      break;
    }
    case 'activitiesAdded': {
      const count = rng.chance(0.7) ? 1 : 2;
      const codes = codesOf(s.trade, s.pkdVersion);
      for (let added = 0, attempts = 0; added < count && attempts < 50; attempts++) {
        const code = attempts < 10 ? rng.pick(codes) : rng.pick(t.pkdPool[s.pkdVersion]);
        if (s.activities.some((a) => a.code === code)) continue;
        s.activities.push(activity(code, s.pkdVersion, false));
        added++;
      }
      break;
    }
    case 'activitiesRemoved': {
      const secondary = s.activities.filter((a) => !a.is_primary);
      const victim = rng.pick(secondary);
      s.activities = s.activities.filter((a) => a !== victim);
      break;
    }
    case 'activitiesRenamed': {
      const i = staleActivity(s);
      const a = s.activities[i]!;
      s.activities[i] = { ...a, name: t.pkdNames[2025].get(a.code)! };
      break;
    }
    case 'mainActivity': {
      const secondary = s.activities.filter((a) => !a.is_primary);
      let chosen: Activity;
      if (secondary.length > 0) chosen = rng.pick(secondary);
      else {
        const pool = t.pkdPool[s.pkdVersion];
        let code = rng.pick(codesOf(s.trade, s.pkdVersion));
        while (s.activities.some((a) => a.code === code)) code = rng.pick(pool);
        chosen = activity(code, s.pkdVersion, false);
        s.activities.push(chosen);
      }
      s.activities = s.activities.map((a) => (a.is_primary !== (a === chosen) ? { ...a, is_primary: a === chosen } : a));
      break;
    }
    case 'bankAccounts':
      s.bankAccounts = changeValues(rng, s, s.bankAccounts, newBankAccount, 3);
      break;
    case 'vatStatus': {
      const u = rng.next();
      const next = s.vatStatus === VAT.active ? (u < 0.7 ? VAT.exempt : VAT.none) : s.vatStatus === VAT.exempt ? (u < 0.8 ? VAT.active : VAT.none) : u < 0.7 ? VAT.active : VAT.exempt;
      s.vatStatus = next;
      // The VAT white list shows accounts only of registered taxpayers.
      if (next === VAT.none) s.bankAccounts = [];
      else if (s.bankAccounts.length === 0) s.bankAccounts = [bankAccount(rng, t)];
      break;
    }
    case 'unitOpened':
      s.units = [...s.units, makeUnit(rng, s, date)];
      break;
    case 'unitClosed': {
      const unit = rng.pick(openUnits(s));
      s.units = rng.chance(0.5)
        ? s.units.map((u) => (u === unit ? { ...u, dates: [...u.dates, { type: 'closure' as const, date }] } : u))
        : s.units.filter((u) => u !== unit);
      break;
    }
    case 'name': {
      const before = nameOf(s);
      for (let i = 0; i < 10 && nameOf(s) === before; i++) s.stem = makeStem(rng, form, s.trade, s.persons, s.city);
      if (nameOf(s) === before) s.stem = `${s.stem} ${form.kind === 'jdg' ? 'Plus' : 'PLUS'}`;
      break;
    }
    case 'legalForm':
      transform(rng, s, rng.pick(TRANSFORMS[form.slug]!));
      break;
    case 'nip':
      s.nipVersion += 1;
      s.nip = nipFor(ctx.seedHash, s.index, s.nipVersion);
      break;
    case 'suspension':
      setDate(s.dates, 'suspension', date);
      s.status = STATUS.suspended;
      s.phase = 'suspended';
      break;
    case 'resumption':
      setDate(s.dates, 'resumption', date);
      s.status = STATUS.active;
      s.phase = 'active';
      break;
    case 'closure': {
      if (form.kind === 'jdg' || form.kind === 'civil') {
        // Sole traders report the day they stopped; the registry records it a little later.
        const earliest = Math.max(...s.dates.map((d) => parseDay(d.date)));
        const closedDay = Math.max(earliest, ctx.epochDay + day - rng.int(8));
        closeCompany(s, date, formatDay(closedDay));
      } else closeCompany(s, date, null);
      break;
    }
    case 'startDate': {
      const current = parseDay(getDate(s.dates, 'activity_start')!);
      const today = ctx.epochDay + day;
      let next = current + (rng.chance(0.6) ? -(1 + rng.int(60)) : 1 + rng.int(60));
      if (next >= today) next = current - 1 - rng.int(30);
      setDate(s.dates, 'activity_start', formatDay(next));
      break;
    }
    case 'liquidationStart':
      setDate(s.dates, 'liquidation_start', date);
      s.status = STATUS.liquidation;
      s.phase = 'liquidation';
      if (rng.chance(0.6)) addPerson(rng, s.persons, COMPANY_ROLES.liquidator);
      break;
    case 'liquidationEnd':
      setDate(s.dates, 'liquidation_end', date);
      if (rng.chance(0.12)) {
        // Liquidation revoked by the shareholders: the company carries on.
        s.status = STATUS.active;
        s.phase = 'active';
      } else closeCompany(s, date, null);
      break;
    case 'bankruptcyStart':
      setDate(s.dates, 'bankruptcy_start', date);
      s.status = STATUS.bankruptcy;
      s.phase = 'bankruptcy';
      break;
    case 'bankruptcyEnd':
      setDate(s.dates, 'bankruptcy_end', date);
      if (rng.chance(0.35)) {
        // Proceedings discontinued: the company is solvent again.
        s.status = STATUS.active;
        s.phase = 'active';
      } else closeCompany(s, date, null);
      break;
    case 'restructuringStart':
      setDate(s.dates, 'restructuring_start', date);
      s.phase = 'restructuring';
      break;
    case 'restructuringEnd':
      setDate(s.dates, 'restructuring_end', date);
      s.phase = 'active';
      break;
  }
}

function transform(rng: Rng, s: State, targetSlug: string): void {
  const t = tables();
  const from = t.forms[s.formIndex]!;
  const targetIndex = t.formIndexBySlug.get(targetSlug)!;
  const target = t.forms[targetIndex]!;
  const R = COMPANY_ROLES;
  if (from.kind === 'jdg') s.stem = s.stem.toUpperCase().replace(/"/g, '');
  if (from.kind === 'civil') {
    s.stem = `${s.stem} ${s.tail}`;
    s.tail = '';
  }
  if (target.kind === 'capital') s.stem = s.stem.replace(/ SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ$/, '');
  s.formIndex = targetIndex;
  if (s.krs === null && target.legal.register === 'krs') s.krs = transformedKrsFor(s.index);
  if (target.kind === 'capital') {
    // Partners and owners become the management board.
    s.persons = s.persons
      .filter((p) => p.role !== R.attorney && p.role !== R.limited)
      .map((p, i) => ({ full_name: p.full_name, role: i === 0 ? R.board : p.role === R.proxy || p.role === R.supervisory ? p.role : R.member }));
    if (targetSlug === 'sa' && !s.persons.some((p) => p.role === R.supervisory)) {
      for (let i = 0; i < 3; i++) addPerson(rng, s.persons, R.supervisory);
    }
  } else if (targetSlug === 'spolka-komandytowa') {
    s.persons = s.persons.map((p, i) => ({ full_name: p.full_name, role: i === 0 ? R.general : R.limited }));
  }
}

// ---------------------------------------------------------------------------------------------
// State on a date

/**
 * Company `index` as of `day` (days after the epoch; 0 or less is the base state), or null when
 * it is registered only later.
 */
function stateAt(ctx: Context, index: number, day: number): State | null {
  let firstDay = 1;
  if (index >= NEW_INDEX_BASE) {
    const registered = registrationDayOf(index);
    if (registered > day) return null;
    firstDay = registered + 1;
  }
  const s = generateBase(ctx, index);
  const days = new ChangeDays(ctx, index, firstDay);
  for (let t = days.day; t <= day && s.phase !== 'closed'; t = days.advance()) {
    if (s.phase === 'pending' && s.pendingStartDay <= t) startActivity(s);
    const rng = createRng(hash3(ctx.seedHash ^ SALT.kind, index, t));
    const kind = chooseChange(rng, s);
    if (kind === null) continue;
    applyChange(rng, s, kind, t, ctx);
    s.lastChangeDay = t;
  }
  if (s.phase === 'pending' && s.pendingStartDay <= day) startActivity(s);
  return s;
}

/** A sole trader registered with a future start date starts: only the status changes. */
function startActivity(s: State): void {
  s.phase = 'active';
  s.status = STATUS.active;
  s.lastChangeDay = s.pendingStartDay;
}

function toSnapshot(s: State): CompanySnapshot {
  const form = tables().forms[s.formIndex]!;
  const identifiers: Identifier[] = [{ type: 'NIP', value: s.nip }, { type: 'REGON9', value: s.regon }];
  if (s.krs !== null) identifiers.push({ type: 'KRS', value: s.krs });
  return {
    identity: { identifiers, company_type: form.legal.basic_form, country_code: 'PL' },
    profiles: [
      {
        source: 'synthetic',
        name: nameOf(s),
        status: s.status,
        legal_form: form.legal.label,
        address: s.address,
        units: s.units,
        contacts: s.contacts,
        activities: s.activities,
        dates: s.dates,
        websites: s.websites,
        vat_status: s.vatStatus,
        bank_accounts: s.bankAccounts,
      },
    ],
    persons: s.persons,
  };
}

// ---------------------------------------------------------------------------------------------
// The source

function normalizeSeed(seed: number | string): string {
  const text = String(seed).trim();
  if (text === '') throw new RangeError('the synthetic seed must not be empty');
  return text;
}

export function createSyntheticSource(options: SyntheticSourceOptions = {}): SyntheticSource {
  const seed = normalizeSeed(options.seed ?? SYNTHETIC_DEFAULTS.seed);
  const size = options.size ?? SYNTHETIC_DEFAULTS.size;
  const epoch = options.epoch ?? SYNTHETIC_DEFAULTS.epoch;
  if (!Number.isInteger(size) || size < 0 || size > SYNTHETIC_MAX_SIZE) {
    throw new RangeError(`synthetic size must be an integer from 0 to ${SYNTHETIC_MAX_SIZE}`);
  }
  const ctx: Context = { seedHash: hashString(seed), size, epochDay: parseDay(epoch) };

  function dayOf(date: string): number {
    const day = parseDay(date) - ctx.epochDay;
    if (day >= MAX_DAYS) throw new RangeError(`the synthetic registry ends ${MAX_DAYS} days after its epoch`);
    return day;
  }

  async function* snapshotsForDate(date: string, runOptions?: { signal?: AbortSignal }): AsyncGenerator<CompanySnapshot> {
    const day = dayOf(date);
    if (day < 1) return;
    const signal = runOptions?.signal;
    signal?.throwIfAborted();

    // Base companies: a short walk of each one's change days decides whether it changes today.
    for (let index = 0; index < ctx.size; index++) {
      if ((index & 0xffff) === 0) signal?.throwIfAborted();
      if (!changesOn(ctx, index, 1, day)) continue;
      const s = stateAt(ctx, index, day);
      if (s && s.lastChangeDay === day) yield toSnapshot(s);
    }
    // Companies registered on earlier days: a change today, or a pending start that comes today.
    for (let registered = 1; registered < day; registered++) {
      const count = newCompaniesOn(ctx, registered);
      for (let j = 0; j < count; j++) {
        const index = NEW_INDEX_BASE + registered * NEW_SLOTS_PER_DAY + j;
        const startsToday = day - registered <= 14 && registered + pendingDelayOf(ctx, index, formOf(ctx, index)) === day;
        if (!startsToday && !changesOn(ctx, index, registered + 1, day)) continue;
        const s = stateAt(ctx, index, day);
        if (s && s.lastChangeDay === day) yield toSnapshot(s);
      }
    }
    // Registered today.
    const count = newCompaniesOn(ctx, day);
    for (let j = 0; j < count; j++) yield toSnapshot(stateAt(ctx, NEW_INDEX_BASE + day * NEW_SLOTS_PER_DAY + j, day)!);
  }

  async function* allSnapshots(date: string, runOptions?: { signal?: AbortSignal; includeRegistered?: boolean }): AsyncGenerator<CompanySnapshot> {
    const day = dayOf(date);
    const signal = runOptions?.signal;
    signal?.throwIfAborted();
    for (let index = 0; index < ctx.size; index++) {
      if ((index & 0x3fff) === 0) signal?.throwIfAborted();
      yield toSnapshot(stateAt(ctx, index, day)!);
    }
    if (!runOptions?.includeRegistered) return;
    for (let registered = 1; registered <= day; registered++) {
      const count = newCompaniesOn(ctx, registered);
      for (let j = 0; j < count; j++) yield toSnapshot(stateAt(ctx, NEW_INDEX_BASE + registered * NEW_SLOTS_PER_DAY + j, day)!);
    }
  }

  return {
    name: 'synthetic',
    seed,
    size,
    epoch,
    snapshotsForDate,
    allSnapshots,
    snapshotOf(index: number, date: string): CompanySnapshot | null {
      if (!Number.isInteger(index) || index < 0) return null;
      if (index < NEW_INDEX_BASE ? index >= ctx.size : (index - NEW_INDEX_BASE) % NEW_SLOTS_PER_DAY >= newCompaniesOn(ctx, registrationDayOf(index))) return null;
      const s = stateAt(ctx, index, dayOf(date));
      return s ? toSnapshot(s) : null;
    },
  };
}

/** `synthetic` → the default seed; `synthetic:SEED` → SEED; anything else → null. */
export function parseSyntheticSourceSpec(spec: string): { seed: string } | null {
  const trimmed = spec.trim();
  if (trimmed === 'synthetic') return { seed: String(SYNTHETIC_DEFAULTS.seed) };
  if (!trimmed.startsWith('synthetic:')) return null;
  const seed = trimmed.slice('synthetic:'.length).trim();
  return seed === '' ? null : { seed };
}
