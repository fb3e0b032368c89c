/**
 * Deterministic company snapshots for the registry benchmarks: the size and shape of real
 * KRS/CEIDG companies (one or two profiles, a few activities, contacts, dates and persons,
 * sometimes local units), about 2 KB of JSON each. `changedSnapshot` applies the kinds of change
 * a real day brings (name, address, contacts, activities, persons, status).
 */
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import { nipCheckDigit, regon9CheckDigit } from '../src/lib/identifiers.ts';
import type { CompanySnapshot, Profile } from '../src/registry/model.ts';

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
}

const CITIES = [
  ['Warszawa', 'mazowieckie', '00-950'],
  ['Kraków', 'małopolskie', '30-001'],
  ['Łódź', 'łódzkie', '90-001'],
  ['Wrocław', 'dolnośląskie', '50-001'],
  ['Poznań', 'wielkopolskie', '60-001'],
  ['Gdańsk', 'pomorskie', '80-001'],
  ['Szczecin', 'zachodniopomorskie', '70-001'],
  ['Lublin', 'lubelskie', '20-001'],
] as const;
const STREETS = [
  'ul. Marszałkowska',
  'ul. Długa',
  'ul. Polna',
  'al. Jerozolimskie',
  'ul. Kościuszki',
  'ul. Mickiewicza',
  'ul. Słowackiego',
];
const ACTIVITIES = [
  ['6201Z', 'Działalność związana z oprogramowaniem'],
  ['4690Z', 'Sprzedaż hurtowa niewyspecjalizowana'],
  ['7022Z', 'Pozostałe doradztwo w zakresie prowadzenia działalności gospodarczej'],
  ['4120Z', 'Roboty budowlane związane ze wznoszeniem budynków'],
  ['5610A', 'Restauracje i inne stałe placówki gastronomiczne'],
  ['4941Z', 'Transport drogowy towarów'],
  ['6820Z', 'Wynajem i zarządzanie nieruchomościami własnymi lub dzierżawionymi'],
  ['4711Z', 'Sprzedaż detaliczna w niewyspecjalizowanych sklepach'],
  ['7112Z', 'Działalność w zakresie inżynierii'],
  ['8559B', 'Pozostałe pozaszkolne formy edukacji'],
] as const;
const FORMS = ['SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'SPÓŁKA AKCYJNA', 'SPÓŁKA KOMANDYTOWA', 'SPÓŁKA JAWNA'];
const NAMES = ['KOWALSKI', 'NOWAK', 'WIŚNIEWSKI', 'WÓJCIK', 'KAMIŃSKI', 'LEWANDOWSKI', 'ZIELIŃSKI', 'SZYMAŃSKI'];
const FIRST = ['JAN', 'ANNA', 'PIOTR', 'KATARZYNA', 'MAREK', 'EWA', 'TOMASZ', 'AGNIESZKA'];

/** Unique per n below 90 million: the first eight digits are n's, the ninth makes a checksum exist. */
export function nipOf(n: number): string {
  const first8 = String(10_000_000 + n);
  for (let d = 0; ; d++) {
    const check = nipCheckDigit(first8 + d);
    if (check !== null) return `${first8}${d}${check}`;
  }
}

function regonOf(n: number): string {
  const first8 = String(10_000_000 + (n % 89_999_999));
  return first8 + String(regon9CheckDigit(first8));
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const date = (r: () => number, from: number, to: number) => {
  const y = from + Math.floor(r() * (to - from));
  return `${y}-${String(1 + Math.floor(r() * 12)).padStart(2, '0')}-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}`;
};

/** Company number n (0-based): unique NIP, REGON and KRS; same n, same snapshot. */
export function benchSnapshot(n: number): CompanySnapshot {
  const r = rng(n * 2_654_435_761 + 1);
  const [city, voivodeship, postal] = pick(r, CITIES);
  const activityCount = 1 + Math.floor(r() * 6);
  const start = date(r, 1995, 2025);
  const profile = (source: 'krs' | 'bir'): Profile => ({
    source,
    name: `${pick(r, NAMES)} ${n} ${pick(r, FORMS)}`,
    status: 'aktywny',
    legal_form: FORMS[n % FORMS.length]!,
    address: {
      street: pick(r, STREETS),
      building: String(1 + Math.floor(r() * 200)),
      apartment: r() < 0.4 ? String(1 + Math.floor(r() * 50)) : '',
      city,
      postal_code: postal,
      voivodeship,
      country_code: 'PL',
    },
    units:
      r() < 0.15
        ? [
            {
              identifier: `${regonOf(n)}00012`,
              name: `ODDZIAŁ ${city.toUpperCase()}`,
              address: null,
              dates: [{ type: 'activity_start', date: start }],
            },
          ]
        : [],
    contacts: [
      { type: 'email', value: `biuro${n}@firma${n % 997}.pl` },
      ...(r() < 0.7 ? [{ type: 'phone' as const, value: `+48 ${String(500_000_000 + (n % 99_999_999))}` }] : []),
      ...(r() < 0.1 ? [{ type: 'fax' as const, value: `+48 22 ${String(1_000_000 + (n % 8_999_999))}` }] : []),
    ],
    activities: Array.from({ length: activityCount }, (_, i) => {
      const [code, name] = ACTIVITIES[(n + i * 3) % ACTIVITIES.length]!;
      return { code, name, is_primary: i === 0 };
    }),
    dates: [
      { type: 'registration', date: start },
      { type: 'activity_start', date: start },
    ],
    websites: r() < 0.5 ? [`https://firma${n}.pl`] : [],
    vat_status: source === 'bir' ? null : 'Czynny',
    bank_accounts: r() < 0.6 ? [`PL${String(10_000_000_000 + n).padStart(26, '1')}`] : [],
  });
  return {
    identity: {
      identifiers: [
        { type: 'NIP', value: nipOf(n) },
        { type: 'REGON9', value: regonOf(n) },
        { type: 'KRS', value: String(n + 1).padStart(10, '0') },
      ],
      company_type: 'spółka',
      country_code: 'PL',
    },
    profiles: [profile('krs')],
    persons: Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
      full_name: `${pick(r, FIRST)} ${pick(r, NAMES)}`,
      role: pick(r, ['PREZES ZARZĄDU', 'CZŁONEK ZARZĄDU', 'PROKURENT']),
    })),
  };
}

/** A day's change to company n: a mix of the kinds of change registries publish. */
export function changedSnapshot(n: number, day: number): CompanySnapshot {
  const s = benchSnapshot(n);
  const p = s.profiles[0]!;
  switch ((n + day) % 6) {
    case 0:
      p.name = `${p.name} NOWA ${day}`;
      break;
    case 1:
      p.address = { ...p.address!, street: 'ul. Nowa', building: String(day) };
      break;
    case 2:
      p.contacts = [...p.contacts, { type: 'phone', value: `+48 600 ${String(100_000 + day)}` }];
      break;
    case 3:
      p.activities = [...p.activities, { code: '7490Z', name: 'Pozostała działalność profesjonalna', is_primary: false }];
      break;
    case 4:
      s.persons = [...s.persons, { full_name: `NOWY CZŁONEK ${day}`, role: 'CZŁONEK ZARZĄDU' }];
      break;
    default:
      p.status = 'w likwidacji';
      p.dates = [...p.dates, { type: 'liquidation_start', date: `2026-01-${String(1 + (day % 28)).padStart(2, '0')}` }];
      break;
  }
  return s;
}

/** Writes snapshots for n in [from, to) (or their changed form) as NDJSON; resolves when on disk (syncToDisk). */
export async function writeBenchFile(path: string, from: number, to: number, changedDay?: number): Promise<void> {
  const out = createWriteStream(path);
  for (let n = from; n < to; n++) {
    const line = JSON.stringify(changedDay === undefined ? benchSnapshot(n) : changedSnapshot(n, changedDay)) + '\n';
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await syncToDisk(path);
}

/**
 * Waits until a file just written is on disk. Otherwise the kernel writes the benchmark's own
 * input back (1.25 GB for 1,000,000 companies) while the run it feeds is being measured, and that
 * I/O and CPU are counted against the run; a registry's file is downloaded well before its run.
 */
export async function syncToDisk(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * How fast this machine runs right now: microseconds for JSON.parse of one company line (best of
 * five passes over 20,000 lines). The machine is a shared virtual machine whose speed drifts by
 * 2x over hours; every rate and every CPU-per-company figure scales with this, so benchmarks
 * print it beside their results (docs/benchmarks.md).
 */
export function speedReference(): number {
  const lines = Array.from({ length: 20_000 }, (_, n) => JSON.stringify(benchSnapshot(n)));
  let best = Infinity;
  for (let pass = 0; pass < 5; pass++) {
    const t0 = performance.now();
    for (const line of lines) JSON.parse(line);
    best = Math.min(best, performance.now() - t0);
  }
  return Number(((best * 1000) / lines.length).toFixed(2));
}
