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
import { isValidNip, isValidRegon9 } from '../../../lib/identifiers.ts';
import { MalformedPayloadError } from '../errors.ts';

/**
 * Maps one CEIDG entry (`firma[]` of `/firma`, API v2 or v3) to a snapshot. CEIDG registers
 * sole proprietors only, so every entry is a natural person's business; its status strings
 * (`AKTYWNY`, `ZAWIESZONY`, …) are kept as CEIDG writes them.
 */

export const CEIDG_LEGAL_FORM = 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ';

/** `numerStatusu` → status, for entries that carry only the number. */
const STATUS_BY_NUMBER: Readonly<Record<number, string>> = {
  1: 'AKTYWNY',
  2: 'WYKRESLONY',
  3: 'ZAWIESZONY',
  4: 'OCZEKUJE_NA_ROZPOCZECIE_DZIALANOSCI',
  9: 'WYLACZNIE_W_FORMIE_SPOLKI',
};

/** Preference when one owner has several entries: the live one is the company today. */
const STATUS_RANK: Readonly<Record<string, number>> = {
  AKTYWNY: 0,
  ZAWIESZONY: 1,
  OCZEKUJE_NA_ROZPOCZECIE_DZIALANOSCI: 2,
  WYLACZNIE_W_FORMIE_SPOLKI: 3,
  WYKRESLONY: 4,
};

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function s(v: unknown): string {
  return typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
}

export function ceidgStatus(entry: Obj): string {
  return s(entry.status) || STATUS_BY_NUMBER[Number(entry.numerStatusu)] || '';
}

/** The entry that best represents an owner: live before deleted, then the latest start. */
export function pickCurrentEntry<T extends Obj>(entries: readonly T[]): T | undefined {
  return [...entries].sort((a, b) => {
    const rank = (STATUS_RANK[ceidgStatus(a)] ?? 5) - (STATUS_RANK[ceidgStatus(b)] ?? 5);
    return rank !== 0 ? rank : s(b.dataRozpoczecia).localeCompare(s(a.dataRozpoczecia));
  })[0];
}

export function normalizeEntryId(id: string): string {
  return id.trim().toUpperCase();
}

function mapAddress(a: unknown): Address | null {
  if (!isObj(a)) return null;
  const address: Address = {
    street: s(a.ulica),
    building: s(a.budynek),
    apartment: s(a.lokal),
    city: s(a.miasto),
    postal_code: s(a.kod),
    voivodeship: s(a.wojewodztwo).toUpperCase(),
    country_code: s(a.kraj).toUpperCase() || 'PL',
  };
  const { country_code: _country, ...rest } = address;
  return Object.values(rest).some(Boolean) ? address : null;
}

function addressLine(a: Address): string {
  const building = a.apartment ? `${a.building}/${a.apartment}` : a.building;
  return `${[a.street, building].filter(Boolean).join(' ')}, ${[a.postal_code, a.city].filter(Boolean).join(' ')}`.trim();
}

/** v2 sends codes as strings (`"3030Z"`), v3 as `{kod, nazwa}`. */
function pkdOf(value: unknown): { code: string; name: string } | null {
  const code = (isObj(value) ? s(value.kod) : s(value)).replace(/[\s.]/g, '').toUpperCase();
  if (!code) return null;
  return { code, name: isObj(value) ? s(value.nazwa) : '' };
}

function mapActivities(entry: Obj): Activity[] {
  const main = pkdOf(entry.pkdGlowny);
  const out = new Map<string, Activity>();
  if (main) out.set(main.code, { code: main.code, name: main.name, is_primary: true });
  for (const item of Array.isArray(entry.pkd) ? entry.pkd : []) {
    const pkd = pkdOf(item);
    if (!pkd) continue;
    const existing = out.get(pkd.code);
    if (existing) existing.name ||= pkd.name;
    else out.set(pkd.code, { code: pkd.code, name: pkd.name, is_primary: false });
  }
  return [...out.values()];
}

function pushDate(dates: DatedEntry[], type: DateType, value: unknown): void {
  const date = s(value).slice(0, 10);
  if (/^\d{4}-\d{2}-\d{2}$/.test(date)) dates.push({ type, date });
}

/** Insolvency notices: `upadlosc` (v2, one) or `upadlosci[]` (v3), classified by their wording. */
function insolvencyDates(entry: Obj, dates: DatedEntry[]): void {
  const notices = [...(Array.isArray(entry.upadlosci) ? entry.upadlosci : []), ...(isObj(entry.upadlosc) ? [entry.upadlosc] : [])];
  for (const notice of notices) {
    if (!isObj(notice)) continue;
    const kind = s(notice.rodzajInformacji).toUpperCase();
    const ending = /ZAKOŃCZ|ZAKONCZ|UMORZ|UCHYL/.test(kind);
    const restructuring = /RESTRUKTUR|UKŁAD|UKLAD|SANAC/.test(kind);
    const type: DateType = restructuring
      ? ending
        ? 'restructuring_end'
        : 'restructuring_start'
      : ending
        ? 'bankruptcy_end'
        : 'bankruptcy_start';
    pushDate(dates, type, notice.dataOrzeczenia);
  }
}

function personName(p: unknown): string {
  return isObj(p) ? [s(p.imie), s(p.nazwisko) || s(p.naziwsko)].filter(Boolean).join(' ') : '';
}

export function mapCeidgEntry(entry: unknown, requested: string): CompanySnapshot {
  if (!isObj(entry)) throw new MalformedPayloadError('ceidg', requested, 'the entry is not a JSON object');
  const id = normalizeEntryId(s(entry.id) || requested);
  const owner = isObj(entry.wlasciciel) ? entry.wlasciciel : {};
  const identifiers: Identifier[] = [];
  const nip = s(owner.nip);
  if (isValidNip(nip)) identifiers.push({ type: 'NIP', value: nip });
  // Test-environment owners carry 14-digit REGONs; the entity's REGON9 is its first nine digits.
  const regon9 = s(owner.regon).slice(0, 9);
  if (isValidRegon9(regon9)) identifiers.push({ type: 'REGON9', value: regon9 });
  if (identifiers.length === 0) throw new MalformedPayloadError('ceidg', id, 'the entry has no valid NIP or REGON of its owner');

  const contacts: Contact[] = [];
  const phone = s(entry.telefon);
  if (phone) contacts.push({ type: 'phone', value: phone });
  const email = s(entry.email).toLowerCase();
  if (email) contacts.push({ type: 'email', value: email });
  const www = s(entry.www).toLowerCase();

  const units: LocalUnit[] = (Array.isArray(entry.adresyDzialalnosciDodatkowe) ? entry.adresyDzialalnosciDodatkowe : []).flatMap((raw) => {
    const address = mapAddress(raw);
    if (!address) return [];
    // CEIDG gives extra places of business no number; the address is their identity.
    return [
      { identifier: addressLine(address), name: isObj(raw) ? s(raw.adresat) || s(raw.opisNietypowegoMiejsca) : '', address, dates: [] },
    ];
  });

  const dates: DatedEntry[] = [];
  pushDate(dates, 'activity_start', entry.dataRozpoczecia);
  pushDate(dates, 'suspension', entry.dataZawieszenia);
  pushDate(dates, 'resumption', entry.dataWznowienia);
  pushDate(dates, 'closure', entry.dataZakonczenia);
  pushDate(dates, 'deletion', entry.dataWykreslenia);
  insolvencyDates(entry, dates);

  const profile: Profile = {
    source: 'ceidg',
    name: s(entry.nazwa),
    status: ceidgStatus(entry),
    legal_form: CEIDG_LEGAL_FORM,
    address: mapAddress(entry.adresDzialalnosci),
    units,
    contacts,
    activities: mapActivities(entry),
    dates,
    websites: www ? [www] : [],
    vat_status: null,
    bank_accounts: [],
  };
  const persons: Person[] = [];
  const ownerName = personName(owner);
  if (ownerName) persons.push({ full_name: ownerName, role: 'WŁAŚCICIEL' });
  const successor = personName(entry.zarzadcaSukcesyjny);
  if (successor) persons.push({ full_name: successor, role: 'ZARZĄDCA SUKCESYJNY' });
  return {
    identity: { identifiers, company_type: CEIDG_LEGAL_FORM, country_code: profile.address?.country_code || 'PL' },
    profiles: [profile],
    persons,
  };
}
