import type {
  Activity,
  Address,
  CompanySnapshot,
  Contact,
  DatedEntry,
  DateType,
  Identifier,
  LocalUnit,
  Person,
  Profile,
} from '../../model.ts';
import countries from 'i18n-iso-countries';
import polishCountryNames from 'i18n-iso-countries/langs/pl.json' with { type: 'json' };
import { isValidNip, isValidRegon9, normalizeKrs } from '../../../lib/identifiers.ts';
import { MalformedPayloadError } from '../errors.ts';
import { asArray, currentView, dateInText, get, isCurrent, isObject, krsDate, str, versionsOf, type Version } from './krs-values.ts';

/**
 * Maps one KRS extract — current (OdpisAktualny) or full (OdpisPelny) — to a snapshot with a
 * single `krs` profile. KRS has no status field: the status is derived from the deletion entry
 * and the current sections of dzial6, with the statutory name suffixes as a second signal.
 */

export const KRS_STATUS = {
  active: 'aktywny',
  liquidation: 'w likwidacji',
  bankruptcy: 'w upadłości',
  restructuring: 'w restrukturyzacji',
  deleted: 'wykreślony',
} as const;

const DELETION_ENTRY = 'WYKREŚLENIE';
const REGISTRATION_ENTRY = 'REJESTRACJA';

interface RegisterEntry {
  number: string;
  description: string;
  date: string | null;
}

export interface KrsExtractMeta {
  krs: string;
  register: 'P' | 'S' | null;
  kind: 'current' | 'full';
}

/**
 * KRS writes countries as Polish names (`NIEMCY`, `PAKISTAN`, `ZJEDNOCZONE EMIRATY ARABSKIE`):
 * read through i18n-iso-countries' Polish names (every ISO 3166-1 country, case ignored), with
 * the few forms KRS uses that are not its names. Unknown names are kept as written.
 */
countries.registerLocale(polishCountryNames);
const KRS_COUNTRY_FORMS: Readonly<Record<string, string>> = {
  'REPUBLIKA CZESKA': 'CZ',
  'ZJEDNOCZONE KRÓLESTWO': 'GB',
  NIDERLANDY: 'NL',
  'STANY ZJEDNOCZONE AMERYKI': 'US',
};

export function countryCode(name: string): string {
  const key = name.trim().toUpperCase();
  if (!key) return '';
  return KRS_COUNTRY_FORMS[key] ?? countries.getAlpha2Code(key, 'pl') ?? key;
}

function last(value: unknown): unknown {
  const items = asArray(value);
  return items[items.length - 1];
}

function text(value: unknown): string {
  return str(last(value));
}

function dedupeDates(dates: DatedEntry[]): DatedEntry[] {
  const seen = new Set<string>();
  return dates.filter((d) => {
    const key = `${d.type}|${d.date}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function mapAddress(adres: unknown, siedziba: unknown): Address | null {
  const a = last(adres);
  const s = last(siedziba);
  if (!isObject(a) && !isObject(s)) return null;
  return {
    street: str(get(a, 'ulica')),
    building: str(get(a, 'nrDomu')),
    apartment: str(get(a, 'nrLokalu')),
    city: str(get(a, 'miejscowosc')) || str(get(s, 'miejscowosc')),
    postal_code: str(get(a, 'kodPocztowy')),
    voivodeship: str(get(s, 'wojewodztwo')),
    country_code: countryCode(str(get(a, 'kraj')) || str(get(s, 'kraj'))),
  };
}

function personName(person: unknown): string {
  const legalName = text(get(person, 'nazwa'));
  if (legalName) return legalName;
  const names = last(get(person, 'imiona'));
  const surname = last(get(person, 'nazwisko'));
  return [
    text(get(names, 'imie')),
    text(get(names, 'imieDrugie')),
    text(get(surname, 'nazwiskoICzlon')),
    text(get(surname, 'nazwiskoIICzlon')),
  ]
    .filter(Boolean)
    .join(' ');
}

function pushPerson(persons: Person[], person: unknown, role: string): void {
  const fullName = personName(person);
  if (fullName) persons.push({ full_name: fullName, role });
}

// Partnerships and joint-stock companies list their owners under other keys than sp. z o.o.
const PARTNER_KEYS: ReadonlyArray<[string, string]> = [
  ['wspolnicySpzoo', 'WSPÓLNIK'],
  ['wspolnicy', 'WSPÓLNIK'],
  ['wspolnicyPartnerzy', 'WSPÓLNIK'],
  ['komplementariusze', 'KOMPLEMENTARIUSZ'],
  ['komandytariusze', 'KOMANDYTARIUSZ'],
  ['jedynyAkcjonariusz', 'JEDYNY AKCJONARIUSZ'],
];

function mapPersons(dane: unknown): Person[] {
  const persons: Person[] = [];
  for (const organ of asArray(get(dane, 'dzial2', 'reprezentacja'))) {
    const organName = text(get(organ, 'nazwaOrganu'));
    for (const member of asArray(get(organ, 'sklad'))) {
      pushPerson(persons, member, text(get(member, 'funkcjaWOrganie')) || organName || 'CZŁONEK ORGANU');
    }
  }
  for (const organ of asArray(get(dane, 'dzial2', 'organNadzoru'))) {
    const organName = text(get(organ, 'nazwa')) || 'ORGAN NADZORU';
    for (const member of asArray(get(organ, 'sklad'))) {
      pushPerson(persons, member, text(get(member, 'funkcjaWOrganie')) || organName);
    }
  }
  for (const proxy of asArray(get(dane, 'dzial2', 'prokurenci'))) pushPerson(persons, proxy, 'PROKURENT');
  for (const [key, role] of PARTNER_KEYS) {
    for (const partner of asArray(get(dane, 'dzial1', key))) pushPerson(persons, partner, role);
  }
  for (const liquidation of asArray(get(dane, 'dzial6', 'likwidacja'))) {
    for (const liquidator of asArray(get(liquidation, 'likwidatorzy'))) pushPerson(persons, liquidator, 'LIKWIDATOR');
  }
  for (const bankruptcy of asArray(get(dane, 'dzial6', 'postepowanieUpadlosciowe'))) {
    for (const trustee of asArray(get(bankruptcy, 'daneSyndyka'))) pushPerson(persons, trustee, 'SYNDYK');
  }
  for (const proceeding of asArray(get(dane, 'dzial6', RESTRUCTURING_KEY))) {
    for (const [key, value] of Object.entries(isObject(proceeding) ? proceeding : {})) {
      if (!key.startsWith('nadzorca')) continue;
      for (const administrator of asArray(value)) {
        pushPerson(persons, administrator, text(get(administrator, 'funkcja')) || 'NADZORCA SĄDOWY');
      }
    }
  }
  return persons;
}

function activityCode(item: unknown): string {
  return [get(item, 'kodDzial'), get(item, 'kodKlasa'), get(item, 'kodPodklasa')]
    .map((p) => text(p))
    .join('')
    .replace(/[\s.]/g, '')
    .toUpperCase();
}

function activityItems(list: unknown): unknown[] {
  // Full extracts wrap each position as `{pozycja: …}`.
  return asArray(list).flatMap((item) => (isObject(item) && 'pozycja' in item ? asArray(item.pozycja) : [item]));
}

function mapActivities(dane: unknown): Activity[] {
  const byCode = new Map<string, Activity>();
  const add = (item: unknown, primary: boolean): void => {
    const code = activityCode(item);
    if (!code) return;
    const existing = byCode.get(code);
    if (existing) {
      existing.is_primary ||= primary;
      return;
    }
    byCode.set(code, { code, name: text(get(item, 'opis')), is_primary: primary });
  };
  const subject = get(dane, 'dzial3', 'przedmiotDzialalnosci');
  for (const item of activityItems(get(subject, 'przedmiotPrzewazajacejDzialalnosci'))) add(item, true);
  for (const item of activityItems(get(subject, 'przedmiotPozostalejDzialalnosci'))) add(item, false);
  // Public-benefit organisations (register S) list their paid and unpaid activities separately.
  const opp = get(dane, 'dzial3', 'przedmiotDzialalnosciOPP');
  for (const item of activityItems(get(opp, 'odplatnyPkd'))) add(item, false);
  for (const item of activityItems(get(opp, 'nieodplatnyPkd'))) add(item, false);
  return [...byCode.values()];
}

const RESTRUCTURING_KEY = 'postepowanieRestrukturyzacyjneNaprawczePrzymusowaRestrukturyzacjaUporzadkowanaLikwidacja';

interface Proceeding {
  open: boolean;
  startDate: string | null;
  endDate: string | null;
}

/** Current versions of one attribute of a raw (not yet collapsed) dzial6 item. */
function currentVersions(item: unknown, key: string, deletionEntry: string | undefined): Version[] {
  return versionsOf(get(item, key), key).filter((v) => isCurrent(v, deletionEntry) && hasContent(v.value));
}

function hasContent(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (isObject(value)) return Object.keys(value).length > 0;
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/**
 * The date a proceeding's decision was taken, best source first: the explicit decision date,
 * a date written in the prose (court, resolution), another date of the same record (e.g. the
 * enforceability clause, days after the decision), and last the date of the register entry
 * (weeks after the decision, and only known in a full extract).
 */
function versionDate(version: Version | undefined, entryDate: (n: string | undefined) => string | null, fields: string[]): string | null {
  if (!version) return null;
  const value = version.value;
  for (const field of fields) {
    const explicit = krsDate(get(value, field));
    if (explicit) return explicit;
  }
  if (!isObject(value)) return dateInText(value) ?? entryDate(version.introducedBy);
  const entries = Object.entries(value);
  const prose = entries
    .filter(([k]) => !k.startsWith('data'))
    .map(([, v]) => dateInText(v))
    .find(Boolean);
  const otherDate = entries
    .filter(([k]) => k.startsWith('data'))
    .map(([, v]) => krsDate(v))
    .find(Boolean);
  return prose ?? otherDate ?? entryDate(version.introducedBy);
}

function mapLiquidations(
  rawDzial6: unknown,
  deletionEntry: string | undefined,
  entryDate: (n: string | undefined) => string | null,
): Proceeding[] {
  return asArray(get(rawDzial6, 'likwidacja')).map((item) => {
    const opened = currentVersions(item, 'otwarcieLikwidacji', deletionEntry)[0];
    const closed = currentVersions(item, 'zakonczenieLikwidacji', deletionEntry)[0];
    return {
      open: opened !== undefined && closed === undefined,
      startDate: versionDate(opened, entryDate, []),
      endDate: versionDate(closed, entryDate, []),
    };
  });
}

function mapBankruptcies(
  rawDzial6: unknown,
  deletionEntry: string | undefined,
  entryDate: (n: string | undefined) => string | null,
): Proceeding[] {
  return asArray(get(rawDzial6, 'postepowanieUpadlosciowe')).map((item) => {
    const declared = currentVersions(item, 'informacjaOOgloszeniuUpadlosci', deletionEntry)[0];
    const ended = currentVersions(item, 'opisZakonczeniaProcesuUpadlosci', deletionEntry)[0];
    return {
      open: declared !== undefined && ended === undefined,
      startDate: versionDate(declared, entryDate, ['data', 'dataOgloszeniaUpadlosci']),
      endDate: versionDate(ended, entryDate, ['data']),
    };
  });
}

function mapRestructurings(
  rawDzial6: unknown,
  deletionEntry: string | undefined,
  entryDate: (n: string | undefined) => string | null,
): Proceeding[] {
  return asArray(get(rawDzial6, RESTRUCTURING_KEY)).map((item) => {
    const keys = isObject(item) ? Object.keys(item) : [];
    const openKey = keys.find((k) => k.startsWith('otwarcie'));
    // Closing attributes are named after how the proceeding ended (zakończenie, umorzenie, …).
    const endKey = keys.find((k) => /^(zakonczenie|umorzenie|uchylenie)/.test(k));
    const opened = openKey ? currentVersions(item, openKey, deletionEntry)[0] : undefined;
    const ended = endKey ? currentVersions(item, endKey, deletionEntry)[0] : undefined;
    return {
      open: opened !== undefined && ended === undefined,
      startDate: versionDate(opened, entryDate, ['data', 'dataOtwarcia']),
      endDate: versionDate(ended, entryDate, ['data']),
    };
  });
}

function readEntries(header: unknown): RegisterEntry[] {
  return asArray(get(header, 'wpis')).map((w) => ({
    number: str(get(w, 'numerWpisu')),
    description: str(get(w, 'opis')).toUpperCase(),
    date: krsDate(get(w, 'dataWpisu')),
  }));
}

function pushDate(dates: DatedEntry[], type: DateType, date: string | null): void {
  if (date) dates.push({ type, date });
}

function collectIdentifiers(krs: string, nip: string, regon: string): Identifier[] {
  const identifiers: Identifier[] = [{ type: 'KRS', value: krs }];
  if (isValidNip(nip)) identifiers.push({ type: 'NIP', value: nip });
  // KRS prints the 14-digit REGON; the entity's REGON9 is its first nine digits.
  const regon9 = regon.slice(0, 9);
  if (isValidRegon9(regon9)) identifiers.push({ type: 'REGON9', value: regon9 });
  return identifiers;
}

/** Reads the KRS number and kind of an extract without mapping it. */
export function readKrsExtractMeta(payload: unknown, requestedKrs: string): KrsExtractMeta {
  const odpis = get(payload, 'odpis');
  if (!isObject(odpis)) throw new MalformedPayloadError('krs', requestedKrs, 'the extract has no `odpis` object');
  const header = odpis.naglowekA ?? odpis.naglowekP;
  if (!isObject(header)) throw new MalformedPayloadError('krs', requestedKrs, 'the extract has no header (naglowekA/naglowekP)');
  const krs = normalizeKrs(str(header.numerKRS));
  if (!krs) throw new MalformedPayloadError('krs', requestedKrs, `the extract has no valid numerKRS (${JSON.stringify(header.numerKRS)})`);
  const registerText = str(header.rejestr);
  const register = registerText === 'RejP' ? 'P' : registerText === 'RejS' ? 'S' : null;
  return { krs, register, kind: 'naglowekA' in odpis ? 'current' : 'full' };
}

export function mapKrsExtract(payload: unknown, requestedKrs: string): CompanySnapshot {
  const meta = readKrsExtractMeta(payload, requestedKrs);
  const odpis = get(payload, 'odpis');
  const header = get(odpis, 'naglowekA') ?? get(odpis, 'naglowekP');
  const rawDane = get(odpis, 'dane');
  if (rawDane !== undefined && !isObject(rawDane)) {
    throw new MalformedPayloadError('krs', requestedKrs, '`odpis.dane` is not an object');
  }

  const entries = readEntries(header);
  const deletion = entries.find((e) => e.description.startsWith(DELETION_ENTRY));
  const entryDate = (n: string | undefined): string | null => (n ? (entries.find((e) => e.number === n)?.date ?? null) : null);
  const dane = currentView(rawDane ?? {}, 'dane', deletion?.number);

  const subject = get(dane, 'dzial1', 'danePodmiotu');
  const name = text(get(subject, 'nazwa'));
  const legalForm = text(get(subject, 'formaPrawna'));
  const ids = last(get(subject, 'identyfikatory'));
  const identifiers = collectIdentifiers(meta.krs, text(get(ids, 'nip')), text(get(ids, 'regon')));

  const seat = get(dane, 'dzial1', 'siedzibaIAdres');
  const address = mapAddress(get(seat, 'adres'), get(seat, 'siedziba'));
  const units: LocalUnit[] = asArray(get(dane, 'dzial1', 'jednostkiTerenoweOddzialy'))
    .map((branch) => ({
      // KRS gives branches no number; the registered name is their only stable handle.
      identifier: text(get(branch, 'nazwa')),
      name: text(get(branch, 'nazwa')),
      address: mapAddress(get(branch, 'adres'), get(branch, 'siedziba')),
      dates: [],
    }))
    .filter((u) => u.identifier);

  const contacts: Contact[] = asArray(get(seat, 'adresPocztyElektronicznej'))
    .map((e) => str(e).toLowerCase())
    .filter(Boolean)
    .map((value) => ({ type: 'email' as const, value }));
  const websites = asArray(get(seat, 'adresStronyInternetowej'))
    .map((w) => str(w).toLowerCase())
    .filter(Boolean);

  const rawDzial6 = get(rawDane, 'dzial6');
  const liquidations = mapLiquidations(rawDzial6, deletion?.number, entryDate);
  const bankruptcies = mapBankruptcies(rawDzial6, deletion?.number, entryDate);
  const restructurings = mapRestructurings(rawDzial6, deletion?.number, entryDate);

  const dates: DatedEntry[] = [];
  const registration =
    krsDate(get(header, 'dataRejestracjiWKRS')) ?? entries.find((e) => e.description.startsWith(REGISTRATION_ENTRY))?.date ?? null;
  pushDate(dates, 'registration', registration);
  for (const p of liquidations) {
    pushDate(dates, 'liquidation_start', p.startDate);
    pushDate(dates, 'liquidation_end', p.endDate);
  }
  for (const p of bankruptcies) {
    pushDate(dates, 'bankruptcy_start', p.startDate);
    pushDate(dates, 'bankruptcy_end', p.endDate);
  }
  for (const p of restructurings) {
    pushDate(dates, 'restructuring_start', p.startDate);
    pushDate(dates, 'restructuring_end', p.endDate);
  }
  pushDate(dates, 'deletion', deletion?.date ?? null);

  const upperName = name.toUpperCase();
  let status: string = KRS_STATUS.active;
  if (deletion) status = KRS_STATUS.deleted;
  else if (bankruptcies.some((p) => p.open) || /\bW UPADŁOŚCI\b/.test(upperName)) status = KRS_STATUS.bankruptcy;
  else if (restructurings.some((p) => p.open) || /\bW RESTRUKTURYZACJI\b/.test(upperName)) status = KRS_STATUS.restructuring;
  else if (liquidations.some((p) => p.open) || /\bW LIKWIDACJI\b/.test(upperName)) status = KRS_STATUS.liquidation;

  const profile: Profile = {
    source: 'krs',
    name,
    status,
    legal_form: legalForm,
    address,
    units,
    contacts,
    activities: mapActivities(dane),
    dates: dedupeDates(dates),
    websites,
    vat_status: null,
    bank_accounts: [],
  };
  return {
    identity: { identifiers, company_type: legalForm, country_code: address?.country_code || 'PL' },
    profiles: [profile],
    persons: mapPersons(dane),
  };
}

/** The bulletin lists numbers without leading zeros, once per entry of the day. */
export function parseBulletin(payload: unknown, date: string): string[] {
  if (!Array.isArray(payload)) throw new MalformedPayloadError('krs', `Biuletyn/${date}`, 'the bulletin is not a JSON array');
  const seen = new Set<string>();
  for (const raw of payload) {
    const krs = normalizeKrs(str(raw));
    if (krs) seen.add(krs);
  }
  return [...seen];
}
