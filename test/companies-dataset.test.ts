import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nipCheckDigit, parseIdentifier, regon9CheckDigit } from '../src/lib/identifiers.ts';
import type { CompanySnapshot, Profile } from '../src/registry/model.ts';
import type { RegistrySource } from '../src/registry/sources/source.ts';
import { jsonFixtureReply, problemReply, type Handler } from './helpers/fixture-server.ts';

/**
 * The small registry the companies tests search, with every answer known, and a stand-in for the
 * KRS API. Shared by the companies tests (a module of its own so that importing it runs no other
 * file's tests); its own test checks the data it hands out.
 */

export function nip(n: number): string {
  for (let i = n; ; i++) {
    const first9 = String(100_000_000 + i).slice(-9);
    const check = nipCheckDigit(first9);
    if (check !== null && first9[0] !== '0') return `${first9}${check}`;
  }
}

export function regon(n: number): string {
  const first8 = String(20_000_000 + n).slice(-8);
  return `${first8}${regon9CheckDigit(first8)}`;
}

export interface Spec {
  ids: { NIP?: string; REGON9?: string; KRS?: string };
  name: string;
  legal: string;
  city: string;
  postal: string;
  voivodeship: string;
  codes: string[];
  start?: string;
  contacts?: { type: 'phone' | 'email' | 'fax'; value: string }[];
  extraDates?: { type: 'suspension' | 'closure'; date: string }[];
}

function snapshotOf(s: Spec): CompanySnapshot {
  const profile: Profile = {
    source: 'file',
    name: s.name,
    status: 'aktywny',
    legal_form: s.legal,
    address: {
      street: 'Prosta',
      building: '1',
      apartment: '',
      city: s.city,
      postal_code: s.postal,
      voivodeship: s.voivodeship,
      country_code: 'PL',
    },
    units: [],
    contacts: s.contacts ?? [],
    activities: s.codes.map((code, i) => ({ code, name: `Activity ${code}`, is_primary: i === 0 })),
    dates: [...(s.start ? [{ type: 'activity_start' as const, date: s.start }] : []), ...(s.extraDates ?? [])],
    websites: [],
    vat_status: null,
    bank_accounts: [],
  };
  return {
    identity: {
      identifiers: Object.entries(s.ids).map(([type, value]) => ({ type: type as 'NIP', value })),
      company_type: s.legal,
      country_code: 'PL',
    },
    profiles: [profile],
    persons: [],
  };
}

const phone = { type: 'phone' as const, value: '+48 42 000 00 01' };
const email = { type: 'email' as const, value: 'biuro@example.pl' };
const fax = { type: 'fax' as const, value: '+48 42 000 00 02' };

export const ALFA = nip(1);
export const BETA = nip(2);
export const GAMMA = nip(3);
export const KOWALSKI = nip(4);
export const DELTA = nip(5);
export const EPSILON = nip(6);
export const ETA = nip(8);
export const THETA_KRS = '0000123456';
export const IOTA_REGON = regon(9);
export const KAPPA = nip(10);

export const COMPANIES: Spec[] = [
  {
    ids: { NIP: ALFA, KRS: '0000000101' },
    name: 'ALFA TRANS SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    city: 'Łódź',
    postal: '90-001',
    voivodeship: 'łódzkie',
    codes: ['49.41.Z', '52.29.C'],
    start: '2020-05-01',
    contacts: [phone, email],
  },
  {
    ids: { NIP: BETA },
    name: 'BETA IT SP. Z O.O.',
    legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    city: 'Warszawa',
    postal: '00-950',
    voivodeship: 'mazowieckie',
    codes: ['6201Z', '6202Z'],
    start: '2021-03-15',
    contacts: [email],
  },
  {
    ids: { NIP: GAMMA },
    name: 'Gamma Software S.A.',
    legal: 'SPÓŁKA AKCYJNA',
    city: 'Kraków',
    postal: '30-001',
    voivodeship: 'małopolskie',
    codes: ['6201Z'],
    start: '2019-01-10',
    contacts: [phone, fax],
  },
  {
    ids: { NIP: KOWALSKI },
    name: 'Jan Kowalski Usługi Transportowe',
    legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
    city: 'ŁÓDŹ',
    postal: '90002',
    voivodeship: 'ŁÓDZKIE',
    codes: ['4941Z'],
    start: '2021-03-15',
    contacts: [phone],
  },
  {
    ids: { NIP: DELTA },
    name: 'Delta Budownictwo sp. z o.o.',
    legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    city: 'Gdańsk',
    postal: '80-001',
    voivodeship: 'pomorskie',
    codes: ['4120Z'],
    start: '2018-06-01',
    contacts: [phone],
    extraDates: [{ type: 'suspension', date: '2024-01-01' }],
  },
  {
    ids: { NIP: EPSILON },
    name: 'Epsilon Handel',
    legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
    city: 'Warszawa',
    postal: '00-951',
    voivodeship: 'mazowieckie',
    codes: ['4711Z'],
    start: '2015-02-02',
    contacts: [email],
    extraDates: [{ type: 'closure', date: '2023-05-05' }],
  },
  {
    ids: { NIP: nip(7) },
    name: 'Fundacja Zeta',
    legal: 'FUNDACJA',
    city: 'Poznań',
    postal: '60-001',
    voivodeship: 'wielkopolskie',
    codes: ['9499Z'],
  },
  {
    ids: { NIP: ETA },
    name: 'Eta Consulting sp. z o.o.',
    legal: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    city: 'LODZ',
    postal: '90-003',
    voivodeship: 'Lodzkie',
    codes: ['7022Z'],
    start: '2022-01-01',
    contacts: [fax],
  },
  {
    ids: { KRS: THETA_KRS },
    name: 'Stowarzyszenie Theta',
    legal: 'STOWARZYSZENIE',
    city: 'Wrocław',
    postal: '50-001',
    voivodeship: 'dolnośląskie',
    codes: ['9499Z'],
    start: '2010-10-10',
  },
  {
    ids: { REGON9: IOTA_REGON },
    name: 'Piekarnia Iota Anna Nowak',
    legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
    city: 'Zielona Góra',
    postal: '65-001',
    voivodeship: 'lubuskie',
    codes: ['1071Z'],
    start: '2021-03-15',
    contacts: [phone, email],
  },
  {
    ids: { NIP: KAPPA },
    name: "PROCENT_100% O'HARA \\ SPÓŁKA JAWNA",
    legal: 'SPÓŁKA JAWNA',
    city: 'Kędzierzyn-Koźle',
    postal: '47-200',
    voivodeship: 'opolskie',
    codes: ['2562Z'],
    start: '2017-07-07',
    contacts: [email],
  },
  // 25 bakeries in Kraków for paging: starts 2000-01-01 .. 2000-01-25.
  ...Array.from({ length: 25 }, (_, i): Spec => ({
    ids: { NIP: nip(100 + i * 3) },
    name: `Piekarnia Krakowska ${i + 1}`,
    legal: 'OSOBA FIZYCZNA PROWADZĄCA DZIAŁALNOŚĆ GOSPODARCZĄ',
    city: 'Kraków',
    postal: '31-000',
    voivodeship: 'małopolskie',
    codes: ['5610A'],
    start: `2000-01-${String(i + 1).padStart(2, '0')}`,
    contacts: i % 2 === 0 ? [phone] : [],
  })),
];

/** A new ACTIVE joint-stock company in Łódź (PKD 62.01.Z), as a later daily run adds it. */
export function lodzCompany(n: number, name: string, start: string): Spec {
  return {
    ids: { NIP: nip(n) },
    name,
    legal: 'SPÓŁKA AKCYJNA',
    city: 'Łódź',
    postal: '90-009',
    voivodeship: 'łódzkie',
    codes: ['6201Z'],
    start,
  };
}

export function sourceOf(specs: Spec[]): RegistrySource {
  return {
    name: 'file',
    async *snapshotsForDate() {
      for (const s of specs) yield snapshotOf(s);
    },
  };
}

/** api-krs.ms.gov.pl for two entities: ORLEN in register P, WOŚP in register S; 404 for the rest. */
export const krsApi: Handler = (req) => {
  const m = /^\/api\/krs\/OdpisAktualny\/(\d{10})$/.exec(req.path);
  const register = req.query.get('rejestr');
  if (m?.[1] === '0000028860' && register === 'P') return jsonFixtureReply('krs/odpis-aktualny-P-0000028860-sa-orlen.json');
  if (m?.[1] === '0000030897' && register === 'S') return jsonFixtureReply('krs/odpis-aktualny-S-0000030897-fundacja-wosp.json');
  return problemReply('krs/odpis-aktualny-not-found-404.json');
};

test('the test registry: valid, distinct identifiers; two companies not ACTIVE', () => {
  const seen = new Set<string>();
  for (const c of COMPANIES) {
    for (const [type, value] of Object.entries(c.ids)) {
      const parsed = parseIdentifier(type as 'NIP', value);
      assert.ok(parsed.ok && parsed.value === value, `${type} ${value}`);
      assert.ok(!seen.has(`${type}:${value}`));
      seen.add(`${type}:${value}`);
    }
  }
  assert.equal(COMPANIES.filter((c) => c.extraDates?.length).length, 2);
});
