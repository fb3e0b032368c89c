import type { Address, CompanySnapshot, Identifier, Person, Profile } from '../../model.ts';
import { isValidNip, isValidRegon9, normalizeKrs } from '../../../lib/identifiers.ts';
import { MalformedPayloadError } from '../errors.ts';

/**
 * Maps a subject of the Ministry of Finance VAT white list to a snapshot with a `vat` profile:
 * VAT status and bank accounts, plus the name, address and persons the list publishes. The
 * list's dates (VAT registration, removal, restoration) concern the VAT register, not the
 * company, so they are not written as company dates.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function s(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

const BUILDING_AT_END = /^(.+?)\s+(\d\S*?(?:\s[A-Za-z])?)(?:\/(\S+))?$/;

/** `CHEMIKÓW 7, 09-411 PŁOCK` → street, building[/apartment], postal code and city. */
export function parseWhiteListAddress(raw: string): Address | null {
  const text = raw.trim();
  if (!text) return null;
  const m = /^(.*?),\s*(\d{2}-\d{3})\s+(.+)$/.exec(text);
  if (!m) return { street: text, building: '', apartment: '', city: '', postal_code: '', voivodeship: '', country_code: 'PL' };
  const [, streetPart, postal, city] = m as unknown as [string, string, string, string];
  // The building is the street part's last word when it holds a digit (`12A`, `65/79`), with a
  // letter written apart from its number (`19 C`, as KRS writes WOSP's seat) kept with it.
  const split = BUILDING_AT_END.exec(streetPart.trim());
  const [street, building, apartment] = split ? [split[1]!, split[2]!, split[3] ?? ''] : [streetPart.trim(), '', ''];
  return {
    street,
    building,
    apartment,
    city: city.trim(),
    postal_code: postal,
    voivodeship: '',
    country_code: 'PL',
  };
}

function persons(list: unknown, role: string): Person[] {
  return (Array.isArray(list) ? list : [])
    .filter(isObj)
    .map((p) => ({ full_name: s(p.companyName) || [s(p.firstName), s(p.lastName)].filter(Boolean).join(' '), role }))
    .filter((p) => p.full_name);
}

export function mapVatSubject(subject: unknown, requested: string): CompanySnapshot {
  if (!isObj(subject)) throw new MalformedPayloadError('vat', requested, 'the subject is not a JSON object');
  const identifiers: Identifier[] = [];
  const nip = s(subject.nip);
  if (isValidNip(nip)) identifiers.push({ type: 'NIP', value: nip });
  const regon9 = s(subject.regon).slice(0, 9);
  if (isValidRegon9(regon9)) identifiers.push({ type: 'REGON9', value: regon9 });
  const krs = s(subject.krs) ? normalizeKrs(s(subject.krs)) : null;
  if (krs) identifiers.push({ type: 'KRS', value: krs });
  if (identifiers.length === 0) throw new MalformedPayloadError('vat', requested, 'the subject has no valid NIP, REGON or KRS');
  const statusVat = s(subject.statusVat);
  if (!statusVat) throw new MalformedPayloadError('vat', requested, 'the subject has no statusVat');
  const accounts = Array.isArray(subject.accountNumbers) ? subject.accountNumbers.map(s).filter(Boolean) : [];
  const profile: Profile = {
    source: 'vat',
    name: s(subject.name),
    status: statusVat,
    legal_form: '',
    address: parseWhiteListAddress(s(subject.workingAddress) || s(subject.residenceAddress)),
    units: [],
    contacts: [],
    activities: [],
    dates: [],
    websites: [],
    vat_status: statusVat,
    // Order on the list carries no meaning; sorted, a reordering is not a change.
    bank_accounts: [...new Set(accounts)].sort(),
  };
  return {
    identity: { identifiers, company_type: '', country_code: 'PL' },
    profiles: [profile],
    persons: [
      ...persons(subject.representatives, 'REPREZENTANT'),
      ...persons(subject.authorizedClerks, 'PROKURENT'),
      ...persons(subject.partners, 'WSPÓLNIK'),
    ],
  };
}
