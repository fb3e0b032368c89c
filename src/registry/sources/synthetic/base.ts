import type { Activity, Address, DatedEntry, DateType, LocalUnit, Person } from '../../model.ts';
import { pkdName } from '../../dictionaries.ts';
import type { City, PkdVersion } from '../../dictionaries.ts';
import type { Trade } from './data.ts';
import * as words from './data.ts';
import { NEW_INDEX_BASE, SALT } from './constants.ts';
import { createRng, hash2, pickWeighted, type Rng } from './random.ts';
import { bankAccount, krsFor, nipFor, regon14For, regonFor } from './identifiers.ts';
import { formatDay, KRS_START_DAY, PKD_2025_DAY, PSA_START_DAY } from './days.ts';
import { type FormKind, type FormSpec, KRS_KINDS, PROCEEDINGS_SUFFIX, STATUS, VAT } from './forms.ts';
import { tables } from './tables.ts';
import { baseConditionOf, type Context, formOf, pendingDelayOf, registrationDayOf, type State } from './state.ts';
import { addPerson, brandName, landlinePhone, mobilePhone, nameSlug, slug, splitName } from './text.ts';

/**
 * A synthetic company as of the epoch (its base state): address, trade, activities, persons, name
 * and contacts.
 */

export function pickCity(rng: Rng): City {
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

export function makeAddress(rng: Rng, city: City, residential: boolean): Address {
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

export function codesOf(trade: Trade, version: PkdVersion): readonly string[] {
  return version === 2025 ? trade.pkd2025 : trade.pkd2007;
}

export function activity(code: string, version: PkdVersion, primary: boolean): Activity {
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

export const COMPANY_ROLES = {
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
export function newPersonRole(rng: Rng, s: State): string {
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
      return form.slug === 'spolka-partnerska'
        ? R.professionalPartner
        : form.slug === 'spolka-jawna'
          ? R.partner
          : rng.pick([R.limited, R.proxy]);
    case 'foundation':
      return R.foundationMember;
    case 'association':
      return rng.pick([R.member, R.treasurer, R.secretary]);
    case 'coop':
      return R.member;
  }
}

/** The name without the legal form; the sole trader's and partners' names come from `persons`. */
export function makeStem(rng: Rng, form: FormSpec, trade: Trade, persons: readonly Person[], city: City): string {
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
      return rng.chance(0.5)
        ? `${rng.pick(['PHU', 'PPHU', 'FHU', 'PUH'])} ${brandName(rng)}`
        : `${brandName(rng)} ${rng.pick(trade.companyWords)}`;
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
        const joined =
          surnames.length > 2 ? `${surnames[0]}, ${surnames[1]} I WSPÓLNICY` : `${surnames[0]} I ${surnames[1] ?? 'WSPÓLNICY'}`;
        if (form.slug === 'spolka-partnerska') {
          const prefix =
            trade.key === 'legal'
              ? rng.pick(['KANCELARIA ADWOKACKA', 'KANCELARIA RADCÓW PRAWNYCH'])
              : trade.key === 'accounting'
                ? 'KANCELARIA DORADCÓW PODATKOWYCH'
                : trade.key === 'architecture'
                  ? 'PRACOWNIA ARCHITEKTONICZNA'
                  : trade.key === 'dentist'
                    ? 'GABINET STOMATOLOGICZNY'
                    : 'PRAKTYKA LEKARSKA';
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

export function nameOf(s: State): string {
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

export function companyEmail(rng: Rng, s: State): string {
  const form = tables().forms[s.formIndex]!;
  if (form.kind === 'jdg' && rng.chance(0.6)) {
    const owner = splitName(s.persons[0]!.full_name);
    const local = `${nameSlug(owner.first)}.${nameSlug(owner.surname)}${rng.chance(0.4) ? rng.int(100) : ''}`;
    return `${local}@${rng.pick(words.EMAIL_PROVIDERS)}`;
  }
  return `${rng.pick(words.BUSINESS_MAILBOXES)}@${domainOf(s)}`;
}

export function website(rng: Rng, s: State): string {
  return rng.chance(0.8) ? `https://www.${domainOf(s)}` : `https://${rng.pick(['sklep', 'oferta', 'www2', 'portal'])}.${domainOf(s)}`;
}

export function phone(rng: Rng, s: State): string {
  return rng.chance(0.7) ? mobilePhone(rng) : landlinePhone(rng, s.city.voivodeship);
}

export function setDate(dates: DatedEntry[], type: DateType, date: string): void {
  const existing = dates.find((d) => d.type === type);
  if (existing) existing.date = date;
  else dates.push({ type, date });
}

export function getDate(dates: readonly DatedEntry[], type: DateType): string | null {
  return dates.find((d) => d.type === type)?.date ?? null;
}

export function generateBase(ctx: Context, index: number): State {
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
    if (form.slug === 'psa' && startDay < PSA_START_DAY)
      startDay = registrationDay = PSA_START_DAY + rng.int(Math.max(1, ctx.epochDay - PSA_START_DAY - 1));
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
    for (let i = 0; i < count; i++)
      state.units.push(makeUnit(rng, state, formatDay(startDay + rng.int(Math.max(1, ctx.epochDay - startDay)))));
  }

  const u = rng.next();
  if (form.kind === 'jdg') state.vatStatus = u < 0.55 ? VAT.active : u < 0.9 ? VAT.exempt : VAT.none;
  else if (form.kind === 'foundation' || form.kind === 'association')
    state.vatStatus = u < 0.2 ? VAT.active : u < 0.6 ? VAT.exempt : VAT.none;
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

export function makeUnit(rng: Rng, s: State, openedOn: string): LocalUnit {
  const city = cityNear(rng, s.city);
  s.unitSeq += 1;
  return {
    identifier: regon14For(s.regon, s.unitSeq),
    name: `${rng.pick(words.UNIT_KINDS)} ${city.name}`,
    address: makeAddress(rng, city, false),
    dates: [{ type: 'activity_start', date: openedOn }],
  };
}
