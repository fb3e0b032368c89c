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
import { isValidNip, isValidRegon9, normalizeKrs } from '../../../lib/identifiers.ts';
import { SourceError } from '../errors.ts';
import { field, type BirRow } from './bir-soap.ts';

/**
 * Pure mapping of GUS REGON (BIR1.1/1.2) reports to the company model, with the status by the
 * official "Uwaga 4" algorithm. Field names are matched without their report prefix and case,
 * so BIR1, BIR1.1 and BIR1.2 spellings (`praw_dataSkresleniazRegon`, `…ZRegon`) read the same.
 */

/** GUS error codes returned as `<ErrorCode>` rows inside a successful SOAP answer. */
export const BIR_ERROR_CODES: Readonly<Record<number, string>> = {
  2: 'too many identifiers in one search',
  4: 'no data found (or a report not matching the entity type; for summary reports also weekends)',
  5: 'invalid or empty report name',
  7: 'no valid session',
  11: 'PKD not available for entities deleted before 2014-11-08',
  21: 'the entity is not a civil partnership',
  22: 'no partners recorded for this civil partnership',
  101: 'too many summary reports generated at once on the server',
  102: 'the current day is not available yet',
  103: 'a future date was given',
  104: 'only the last 7 days are available',
  105: 'invalid summary report name',
};

export class BirServiceError extends SourceError {
  readonly code: number;
  readonly messagePl: string;
  readonly messageEn: string;
  /** Entity type GUS reports when a full report does not match it (`Typ_podmiotu`). */
  readonly entityType: string;
  constructor(code: number, details: { messagePl?: string; messageEn?: string; entityType?: string; context: string }) {
    const meaning = BIR_ERROR_CODES[code] ?? 'unknown GUS error code';
    super('bir', `bir ${details.context}: GUS error ${code} (${meaning})${details.messageEn ? `: ${details.messageEn}` : ''}`);
    this.name = 'BirServiceError';
    this.code = code;
    this.messagePl = details.messagePl ?? '';
    this.messageEn = details.messageEn ?? '';
    this.entityType = details.entityType ?? '';
  }
}

/** The GUS error carried by a result, if its first row is an error row. */
export function birErrorOf(rows: readonly BirRow[], context: string): BirServiceError | null {
  const first = rows[0];
  const code = field(first, 'ErrorCode');
  if (!code) return null;
  return new BirServiceError(Number(code), {
    // The civil-partnership report words its errors as "database search results".
    messagePl: field(first, 'ErrorMessagePl', 'DatabaseSearchResultPl'),
    messageEn: field(first, 'ErrorMessageEn', 'DatabaseSearchResultEn'),
    entityType: field(first, 'Typ_podmiotu'),
    context,
  });
}

export interface SearchHit {
  /** 9 digits for entities, 14 for local units. */
  regon: string;
  nip: string;
  name: string;
  /** P legal entity, F natural person's business, LP/LF their local units. */
  type: string;
  silo: number;
  endDate: string;
}

export function readSearchHits(rows: readonly BirRow[]): SearchHit[] {
  return rows.map((row) => ({
    regon: field(row, 'Regon'),
    nip: field(row, 'Nip'),
    name: field(row, 'Nazwa'),
    type: field(row, 'Typ').toUpperCase(),
    silo: Number(field(row, 'SilosID')) || 0,
    endDate: field(row, 'DataZakonczeniaDzialalnosci'),
  }));
}

/** Full-report names; BIR1.2 (production since 2025) adds the PKD version to the PKD reports. */
export function reportNames(prefix: 'BIR11' | 'BIR12') {
  return {
    legal: `${prefix}OsPrawna`,
    legalPkd: `${prefix}OsPrawnaPkd`,
    legalUnits: `${prefix}OsPrawnaListaJednLokalnych`,
    legalPartners: `${prefix}OsPrawnaSpCywilnaWspolnicy`,
    legalUnit: `${prefix}JednLokalnaOsPrawnej`,
    legalUnitPkd: `${prefix}JednLokalnaOsPrawnejPkd`,
    natural: `${prefix}OsFizycznaDaneOgolne`,
    naturalPkd: `${prefix}OsFizycznaPkd`,
    naturalUnits: `${prefix}OsFizycznaListaJednLokalnych`,
    naturalUnit: `${prefix}JednLokalnaOsFizycznej`,
    naturalUnitPkd: `${prefix}JednLokalnaOsFizycznejPkd`,
    silo: {
      1: `${prefix}OsFizycznaDzialalnoscCeidg`,
      2: `${prefix}OsFizycznaDzialalnoscRolnicza`,
      3: `${prefix}OsFizycznaDzialalnoscPozostala`,
      4: `${prefix}OsFizycznaDzialalnoscSkreslonaDo20141108`,
    } as Record<number, string>,
  } as const;
}

export const SUMMARY_REPORTS = {
  newEntities: 'BIR11NowePodmiotyPrawneOrazDzialalnosciOsFizycznych',
  updatedEntities: 'BIR11AktualizowanePodmiotyPrawneOrazDzialalnosciOsFizycznych',
  deletedEntities: 'BIR11SkreslonePodmiotyPrawneOrazDzialalnosciOsFizycznych',
  newUnits: 'BIR11NoweJednostkiLokalne',
  updatedUnits: 'BIR11AktualizowaneJednostkiLokalne',
  deletedUnits: 'BIR11SkresloneJednostkiLokalne',
} as const;

export const BIR_STATUS = {
  active: 'aktywny',
  suspended: 'zawieszony',
  ended: 'zakończony',
  deleted: 'skreślony',
  bankruptcy: 'w upadłości',
  bankruptcyEnded: 'po zakończeniu postępowania upadłościowego',
  liquidation: 'w likwidacji',
  restructuring: 'w restrukturyzacji',
} as const;

/** The status-relevant dates of one report row (entity, business or local unit). */
export interface ActivityDates {
  start: string;
  suspension: string;
  resumption: string;
  end: string;
  deletion: string;
  bankruptcy: string;
  bankruptcyEnd: string;
}

export function readActivityDates(row: BirRow | undefined): ActivityDates {
  return {
    start: field(row, 'dataRozpoczeciaDzialalnosci'),
    suspension: field(row, 'dataZawieszeniaDzialalnosci'),
    resumption: field(row, 'dataWznowieniaDzialalnosci'),
    end: field(row, 'dataZakonczeniaDzialalnosci'),
    deletion: field(
      row,
      'dataSkresleniaZRegon',
      'dataSkresleniaDzialalnosciZRegon',
      'dataSkresleniaDzialalanosciZRegon',
      'dataSkresleniazRegonDzialalnosci',
      'dataSkresleniaPodmiotuZRegon',
    ),
    bankruptcy: field(row, 'dataOrzeczeniaOUpadlosci'),
    bankruptcyEnd: field(row, 'dataZakonczeniaPostepowaniaUpadlosciowego'),
  };
}

/**
 * "Uwaga 4" of the GUS instruction: active when no suspension, end, deletion or bankruptcy date
 * is set, or when a suspension was followed by a later resumption and nothing else is set.
 */
export function isActiveByUwaga4(d: ActivityDates): boolean {
  if (d.end || d.deletion || d.bankruptcy || d.bankruptcyEnd) return false;
  return !d.suspension || (d.resumption !== '' && d.suspension < d.resumption);
}

/** A registry-language label; when "Uwaga 4" says active, the statutory name suffix may still say more. */
export function birStatus(d: ActivityDates, name: string): string {
  if (d.deletion) return BIR_STATUS.deleted;
  if (d.end) return BIR_STATUS.ended;
  if (d.bankruptcyEnd) return BIR_STATUS.bankruptcyEnded;
  if (d.bankruptcy) return BIR_STATUS.bankruptcy;
  if (!isActiveByUwaga4(d)) return BIR_STATUS.suspended;
  // The test register's UNISERV … W UPADŁOŚCI UKŁADOWEJ has no bankruptcy date: the name is the only signal.
  const upper = name.toUpperCase();
  if (/\bW UPADŁOŚCI\b/.test(upper)) return BIR_STATUS.bankruptcy;
  if (/\bW RESTRUKTURYZACJI\b/.test(upper)) return BIR_STATUS.restructuring;
  if (/\bW LIKWIDACJI\b/.test(upper)) return BIR_STATUS.liquidation;
  return BIR_STATUS.active;
}

function pushDate(dates: DatedEntry[], type: DateType, value: string): void {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) dates.push({ type, date: value });
}

function activityDates(d: ActivityDates, registration: string): DatedEntry[] {
  const dates: DatedEntry[] = [];
  pushDate(dates, 'registration', registration);
  pushDate(dates, 'activity_start', d.start);
  pushDate(dates, 'suspension', d.suspension);
  pushDate(dates, 'resumption', d.resumption);
  pushDate(dates, 'closure', d.end);
  pushDate(dates, 'deletion', d.deletion);
  pushDate(dates, 'bankruptcy_start', d.bankruptcy);
  pushDate(dates, 'bankruptcy_end', d.bankruptcyEnd);
  return dates;
}

/** GUS writes postal codes without the dash (`24100`). */
export function formatPostalCode(raw: string): string {
  const digits = raw.replace(/\D/g, '');
  return digits.length === 5 ? `${digits.slice(0, 2)}-${digits.slice(2)}` : raw.trim();
}

/** The seat address of any report row (`adSiedz…`). */
export function readAddress(row: BirRow | undefined): Address | null {
  const address: Address = {
    street: field(row, 'adSiedzUlica_Nazwa'),
    building: field(row, 'adSiedzNumerNieruchomosci'),
    apartment: field(row, 'adSiedzNumerLokalu'),
    city: field(row, 'adSiedzMiejscowosc_Nazwa'),
    postal_code: formatPostalCode(field(row, 'adSiedzKodPocztowy')),
    voivodeship: field(row, 'adSiedzWojewodztwo_Nazwa').toUpperCase(),
    country_code: field(row, 'adSiedzKraj_Symbol').toUpperCase(),
  };
  const { country_code: _country, ...rest } = address;
  if (Object.values(rest).every((v) => v === '')) return null;
  if (!address.country_code) address.country_code = 'PL';
  return address;
}

function readContacts(row: BirRow | undefined): { contacts: Contact[]; websites: string[] } {
  const contacts: Contact[] = [];
  const phone = field(row, 'numerTelefonu');
  const extension = field(row, 'numerWewnetrznyTelefonu');
  if (phone) contacts.push({ type: 'phone', value: extension ? `${phone} wew. ${extension}` : phone });
  const fax = field(row, 'numerFaksu');
  if (fax) contacts.push({ type: 'fax', value: fax });
  for (const email of [field(row, 'adresEmail'), field(row, 'adresEmail2')]) {
    const value = email.toLowerCase();
    if (value && !contacts.some((c) => c.type === 'email' && c.value === value)) contacts.push({ type: 'email', value });
  }
  const www = field(row, 'adresStronyInternetowej').toLowerCase();
  return { contacts, websites: www ? [www] : [] };
}

export interface PkdEntry extends Activity {
  /** `2007` or `2025` in BIR1.2 reports; empty in BIR1.1. */
  version: string;
  silo: number;
}

export function readPkdRows(rows: readonly BirRow[]): PkdEntry[] {
  return rows
    .map((row) => ({
      code: field(row, 'pkdKod', 'pkd_Kod').replace(/[\s.]/g, '').toUpperCase(),
      name: field(row, 'pkdNazwa', 'pkd_Nazwa'),
      is_primary: field(row, 'pkdPrzewazajace', 'pkd_Przewazajace') === '1',
      version: field(row, 'pkdWersja'),
      silo: Number(field(row, 'SilosID', 'SilosId')) || 0,
    }))
    .filter((p) => p.code !== '');
}

function toActivities(entries: readonly PkdEntry[], isPrimary: (p: PkdEntry) => boolean): Activity[] {
  const byCode = new Map<string, Activity>();
  for (const p of entries) {
    const existing = byCode.get(p.code);
    if (existing) existing.is_primary ||= isPrimary(p);
    else byCode.set(p.code, { code: p.code, name: p.name, is_primary: isPrimary(p) });
  }
  return [...byCode.values()];
}

/** A local unit from a `…ListaJednLokalnych` row or a `JednLokalna…` report. */
export function readLocalUnit(row: BirRow): LocalUnit {
  const d = readActivityDates(row);
  return {
    identifier: field(row, 'regon14'),
    name: field(row, 'nazwa'),
    address: readAddress(row),
    dates: activityDates(d, ''),
  };
}

function identifiersOf(regon: string, nip: string, krs: string | null): Identifier[] {
  const out: Identifier[] = [];
  const regon9 = regon.slice(0, 9);
  if (isValidRegon9(regon9)) out.push({ type: 'REGON9', value: regon9 });
  if (isValidNip(nip)) out.push({ type: 'NIP', value: nip });
  if (krs) out.push({ type: 'KRS', value: krs });
  return out;
}

// Register kinds 138 (entrepreneurs) and 139 (associations, foundations): the number is a KRS number.
const KRS_REGISTER_KINDS = new Set(['138', '139']);

export interface LegalEntityReports {
  general: BirRow;
  pkd: readonly BirRow[];
  units: readonly BirRow[];
  partners: readonly BirRow[];
}

export function mapLegalEntity(reports: LegalEntityReports): CompanySnapshot {
  const row = reports.general;
  const name = field(row, 'nazwa');
  const d = readActivityDates(row);
  const registerKind = field(row, 'rodzajRejestruEwidencji_Symbol');
  const krs = KRS_REGISTER_KINDS.has(registerKind) ? normalizeKrs(field(row, 'numerWRejestrzeEwidencji')) : null;
  const { contacts, websites } = readContacts(row);
  const legalForm = field(row, 'szczegolnaFormaPrawna_Nazwa');
  const profile: Profile = {
    source: 'bir',
    name,
    status: birStatus(d, name),
    legal_form: legalForm,
    address: readAddress(row),
    units: reports.units.map(readLocalUnit).filter((u) => u.identifier),
    contacts,
    activities: toActivities(readPkdRows(reports.pkd), (p) => p.is_primary),
    dates: activityDates(d, field(row, 'dataWpisuDoRejestruEwidencji')),
    websites,
    vat_status: null,
    bank_accounts: [],
  };
  const persons: Person[] = reports.partners
    .map((p) => {
      const personal = [field(p, 'imiePierwsze'), field(p, 'imieDrugie'), field(p, 'nazwisko')].filter(Boolean).join(' ');
      return { full_name: personal || field(p, 'firmaNazwa'), role: 'WSPÓLNIK SPÓŁKI CYWILNEJ' };
    })
    .filter((p) => p.full_name);
  return {
    identity: {
      identifiers: identifiersOf(field(row, 'regon9', 'regon14'), field(row, 'nip'), krs),
      company_type: field(row, 'podstawowaFormaPrawna_Nazwa'),
      country_code: profile.address?.country_code || 'PL',
    },
    profiles: [profile],
    persons,
  };
}

export interface NaturalPersonReports {
  /** `…OsFizycznaDaneOgolne`; missing when GUS did not return it. */
  general: BirRow | null;
  /** One row per business (silo) the person runs. */
  businesses: ReadonlyArray<{ silo: number; row: BirRow }>;
  pkd: readonly BirRow[];
  units: readonly BirRow[];
  /** Identifiers known from the search when the reports lack them (BIR1 search rows had no NIP). */
  fallback?: { regon?: string; nip?: string };
}

const NATURAL_PERSON_FORM = 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ';

// The CEIDG business is the one people mean; agriculture and "other" come after it.
const SILO_PREFERENCE = [1, 3, 2, 4];

/**
 * One profile per person: the businesses (silos) share the REGON, NIP and PKD list. The main
 * business is the first active one in CEIDG, other, agricultural, deleted-before-2014 order, and
 * the person counts as active when any business is (Uwaga 4 per silo).
 */
export function mapNaturalPerson(reports: NaturalPersonReports): CompanySnapshot {
  const ranked = [...reports.businesses].sort((a, b) => SILO_PREFERENCE.indexOf(a.silo) - SILO_PREFERENCE.indexOf(b.silo));
  const active = ranked.filter((b) => isActiveByUwaga4(readActivityDates(b.row)));
  const main = active[0] ?? ranked[0];
  const mainRow = main?.row;
  const d = readActivityDates(mainRow);
  const name = field(mainRow, 'nazwa');
  const { contacts, websites } = readContacts(mainRow);
  const pkd = readPkdRows(reports.pkd);
  // BIR1.1 PKD rows without a silo id belong to the only business there is.
  const primaryOf = (p: PkdEntry): boolean => p.is_primary && (p.silo === 0 || p.silo === main?.silo);
  const general = reports.general;
  const owner = [field(general ?? undefined, 'imie1'), field(general ?? undefined, 'imie2'), field(general ?? undefined, 'nazwisko')]
    .filter(Boolean)
    .join(' ');
  const profile: Profile = {
    source: 'bir',
    name,
    status: birStatus(d, name),
    // The special form of a sole trader is "BEZ SZCZEGÓLNEJ FORMY PRAWNEJ"; the basic form says what it is.
    legal_form: field(general ?? undefined, 'podstawowaFormaPrawna_Nazwa') || NATURAL_PERSON_FORM,
    address: readAddress(mainRow),
    units: reports.units.map(readLocalUnit).filter((u) => u.identifier),
    contacts,
    activities: toActivities(pkd, primaryOf),
    dates: activityDates(d, field(mainRow, 'dataWpisuDoRejestruEwidencji')),
    websites,
    vat_status: null,
    bank_accounts: [],
  };
  const regon = field(general ?? undefined, 'regon9') || field(mainRow, 'regon9') || reports.fallback?.regon || '';
  const nip = field(general ?? undefined, 'nip') || reports.fallback?.nip || '';
  return {
    identity: {
      identifiers: identifiersOf(regon, nip, null),
      company_type: field(general ?? undefined, 'podstawowaFormaPrawna_Nazwa') || NATURAL_PERSON_FORM,
      country_code: profile.address?.country_code || 'PL',
    },
    profiles: [profile],
    persons: owner ? [{ full_name: owner, role: 'WŁAŚCICIEL' }] : [],
  };
}
