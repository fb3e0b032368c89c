import type { Activity, Address, ContactType, LocalUnit } from '../../model.ts';
import { type Rng } from './random.ts';
import { bankAccount, MAX_NIP_VERSION, newBankAccount, nipFor, transformedKrsFor } from './identifiers.ts';
import { formatDay, parseDay } from './days.ts';
import { KRS_KINDS, type Phase, PROCEEDINGS_KINDS, STATUS, SUSPENDABLE_KINDS, TRANSFORMS, VAT } from './forms.ts';
import { tables } from './tables.ts';
import type { Context, State } from './state.ts';
import { addPerson } from './text.ts';
import {
  activity,
  codesOf,
  COMPANY_ROLES,
  companyEmail,
  getDate,
  makeAddress,
  makeStem,
  makeUnit,
  nameOf,
  newPersonRole,
  phone,
  pickCity,
  setDate,
  website,
} from './base.ts';

/**
 * The change model of the synthetic registry: which change a company has on one of its change days,
 * and applying it.
 */

type ChangeKind =
  | 'phone'
  | 'email'
  | 'website'
  | 'personAdded'
  | 'personRemoved'
  | 'addressChanged'
  | 'addressAdded'
  | 'activitiesAdded'
  | 'activitiesRemoved'
  | 'activitiesRenamed'
  | 'mainActivity'
  | 'bankAccounts'
  | 'vatStatus'
  | 'unitOpened'
  | 'unitClosed'
  | 'name'
  | 'legalForm'
  | 'nip'
  | 'suspension'
  | 'resumption'
  | 'closure'
  | 'startDate'
  | 'liquidationStart'
  | 'liquidationEnd'
  | 'bankruptcyStart'
  | 'bankruptcyEnd'
  | 'restructuringStart'
  | 'restructuringEnd';

type WeightTable = ReadonlyArray<readonly [ChangeKind, number]>;

/**
 * How often each change happens, by phase. Contacts and persons are common, insolvency is rare;
 * a phase with an end (suspension, proceedings) mostly moves towards it. Insolvency is several
 * times more frequent than in the real registries, so that a month of a 20,000-company registry
 * shows every event type.
 */
const CHANGE_WEIGHTS: Readonly<Record<Exclude<Phase, 'closed'>, WeightTable>> = {
  active: [
    ['phone', 120],
    ['email', 110],
    ['website', 60],
    ['personAdded', 70],
    ['personRemoved', 45],
    ['addressChanged', 70],
    ['addressAdded', 400],
    ['activitiesAdded', 55],
    ['activitiesRemoved', 35],
    ['activitiesRenamed', 30],
    ['mainActivity', 30],
    ['bankAccounts', 45],
    ['vatStatus', 30],
    ['unitOpened', 25],
    ['unitClosed', 60],
    ['name', 22],
    ['legalForm', 8],
    ['nip', 5],
    ['suspension', 30],
    ['closure', 18],
    ['startDate', 12],
    ['liquidationStart', 18],
    ['bankruptcyStart', 16],
    ['restructuringStart', 20],
  ],
  pending: [
    ['phone', 100],
    ['email', 100],
    ['website', 50],
  ],
  suspended: [
    ['resumption', 400],
    ['closure', 60],
    ['phone', 40],
    ['email', 40],
    ['vatStatus', 50],
    ['bankAccounts', 20],
    ['addressChanged', 20],
    ['addressAdded', 100],
    ['personAdded', 10],
  ],
  liquidation: [
    ['liquidationEnd', 350],
    ['personAdded', 60],
    ['personRemoved', 40],
    ['addressChanged', 30],
    ['addressAdded', 100],
    ['bankAccounts', 30],
    ['vatStatus', 60],
    ['phone', 30],
    ['email', 30],
    ['unitClosed', 60],
  ],
  bankruptcy: [
    ['bankruptcyEnd', 350],
    ['vatStatus', 80],
    ['bankAccounts', 40],
    ['addressChanged', 20],
    ['personRemoved', 30],
    ['unitClosed', 50],
  ],
  restructuring: [
    ['restructuringEnd', 300],
    ['phone', 40],
    ['email', 40],
    ['website', 40],
    ['personAdded', 30],
    ['personRemoved', 20],
    ['bankAccounts', 30],
    ['activitiesAdded', 20],
    ['addressChanged', 20],
    ['vatStatus', 10],
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

export function chooseChange(rng: Rng, s: State): ChangeKind | null {
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
  return (
    a !== null &&
    a.street === b.street &&
    a.building === b.building &&
    a.apartment === b.apartment &&
    a.postal_code === b.postal_code &&
    a.city === b.city
  );
}

function closeCompany(s: State, date: string, closureDate: string | null): void {
  if (closureDate) setDate(s.dates, 'closure', closureDate);
  setDate(s.dates, 'deletion', date);
  s.status = STATUS.deleted;
  s.phase = 'closed';
}

export function applyChange(rng: Rng, s: State, kind: ChangeKind, day: number, ctx: Context): void {
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
      const next =
        s.vatStatus === VAT.active
          ? u < 0.7
            ? VAT.exempt
            : VAT.none
          : s.vatStatus === VAT.exempt
            ? u < 0.8
              ? VAT.active
              : VAT.none
            : u < 0.7
              ? VAT.active
              : VAT.exempt;
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
      .map((p, i) => ({
        full_name: p.full_name,
        role: i === 0 ? R.board : p.role === R.proxy || p.role === R.supervisory ? p.role : R.member,
      }));
    if (targetSlug === 'sa' && !s.persons.some((p) => p.role === R.supervisory)) {
      for (let i = 0; i < 3; i++) addPerson(rng, s.persons, R.supervisory);
    }
  } else if (targetSlug === 'spolka-komandytowa') {
    s.persons = s.persons.map((p, i) => ({ full_name: p.full_name, role: i === 0 ? R.general : R.limited }));
  }
}
