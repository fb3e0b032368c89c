import { writeFileSync } from 'node:fs';
import { nipCheckDigit, regon9CheckDigit } from '../../src/lib/identifiers.ts';
import type { CompanySnapshot, Contact, DatedEntry, Person } from '../../src/registry/model.ts';
import type { RegistrySource } from '../../src/registry/sources/source.ts';

/** A valid NIP for n (checksum computed; first digit 1-9 so no prefix looks like a placeholder). */
export function nipFor(n: number): string {
  for (let k = n; ; k += 1_000_003) {
    const first9 = String(100_000_000 + (k % 800_000_000)).slice(0, 9);
    const check = nipCheckDigit(first9);
    if (check !== null) return first9 + String(check);
  }
}

export function regonFor(n: number): string {
  const first8 = String(10_000_000 + (n % 80_000_000)).slice(0, 8);
  return first8 + String(regon9CheckDigit(first8));
}

export function krsFor(n: number): string {
  return String(n).padStart(10, '0');
}

export interface CompanySpec {
  n: number;
  name?: string;
  status?: string;
  legalForm?: string;
  city?: string;
  street?: string;
  postalCode?: string;
  voivodeship?: string;
  contacts?: Contact[];
  activities?: { code: string; name: string; is_primary: boolean }[];
  dates?: DatedEntry[];
  persons?: Person[];
  /** Leave out the KRS (the company is then found by NIP or REGON only). */
  withoutKrs?: boolean;
}

/** A company snapshot as the file source reads it: one `file` profile. */
export function companySnapshot(spec: CompanySpec): CompanySnapshot {
  const identifiers = [
    { type: 'NIP' as const, value: nipFor(spec.n) },
    { type: 'REGON9' as const, value: regonFor(spec.n) },
    ...(spec.withoutKrs ? [] : [{ type: 'KRS' as const, value: krsFor(spec.n) }]),
  ];
  return {
    identity: { identifiers, company_type: 'spółka', country_code: 'PL' },
    profiles: [
      {
        source: 'file',
        name: spec.name ?? `FIRMA ${spec.n} SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ`,
        status: spec.status ?? 'aktywny',
        legal_form: spec.legalForm ?? 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
        address: {
          street: spec.street ?? 'ul. Prosta',
          building: String(1 + (spec.n % 90)),
          apartment: '',
          city: spec.city ?? 'Łódź',
          postal_code: spec.postalCode ?? '90-001',
          voivodeship: spec.voivodeship ?? 'łódzkie',
          country_code: 'PL',
        },
        units: [],
        contacts: spec.contacts ?? [{ type: 'email', value: `biuro${spec.n}@example.pl` }],
        activities: spec.activities ?? [{ code: '6201Z', name: 'Działalność związana z oprogramowaniem', is_primary: true }],
        dates: spec.dates ?? [
          { type: 'registration', date: '2015-03-02' },
          { type: 'activity_start', date: '2015-03-10' },
        ],
        websites: [],
        vat_status: null,
        bank_accounts: [],
      },
    ],
    persons: spec.persons ?? [{ full_name: `JAN KOWALSKI ${spec.n}`, role: 'PREZES ZARZĄDU' }],
  };
}

export function writeNdjson(path: string, snapshots: readonly CompanySnapshot[]): string {
  writeFileSync(path, snapshots.map((s) => JSON.stringify(s)).join('\n') + '\n');
  return path;
}

/** A source that yields `snapshots` and then dies, like a process killed mid-run. */
export function crashingSource(inner: RegistrySource, crashAfter: number): RegistrySource {
  return {
    name: inner.name,
    async *snapshotsForDate(date, options) {
      let n = 0;
      for await (const s of inner.snapshotsForDate(date, options)) {
        if (n++ === crashAfter) throw new Error('simulated crash');
        yield s;
      }
    },
  };
}

export function arraySource(snapshots: readonly CompanySnapshot[], name: 'file' | 'synthetic' = 'file'): RegistrySource {
  return {
    name,
    async *snapshotsForDate() {
      yield* snapshots;
    },
  };
}
