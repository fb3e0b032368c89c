import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalize, canonicalizeOwned, deriveStatus, mergeIsIncoming, mergeSnapshots, primaryIdentifier } from './merge.ts';
import { diffSnapshots } from './diff.ts';
import { DATE_TYPES, type CompanySnapshot, type DatedEntry, type Identifier, type Person, type Profile, type SourceName } from './model.ts';

function profile(source: SourceName, overrides: Partial<Profile> = {}): Profile {
  return {
    source,
    name: `FIRMA (${source})`,
    status: 'aktywny',
    legal_form: 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ',
    address: {
      street: 'ul. Długa',
      building: '1',
      apartment: '',
      city: 'Gdańsk',
      postal_code: '80827',
      voivodeship: 'pomorskie',
      country_code: 'PL',
    },
    units: [],
    contacts: [],
    activities: [{ code: '6201Z', name: 'DZIAŁALNOŚĆ ZWIĄZANA Z OPROGRAMOWANIEM', is_primary: true }],
    dates: [],
    websites: [],
    vat_status: null,
    bank_accounts: [],
    ...overrides,
  };
}

function company(identifiers: Identifier[], profiles: Profile[], persons: Person[] = [], company_type = 'P'): CompanySnapshot {
  return { identity: { identifiers, company_type, country_code: 'PL' }, profiles, persons };
}

const NIP: Identifier = { type: 'NIP', value: '9721237323' };
const KRS: Identifier = { type: 'KRS', value: '0000405063' };
const REGON: Identifier = { type: 'REGON9', value: '301991466' };
const BOARD: Person[] = [{ full_name: 'Jan Kowalski', role: 'PREZES ZARZĄDU' }];

describe('mergeSnapshots', () => {
  it('takes the first report as it is, in canonical order', () => {
    const incoming = company([KRS, NIP], [profile('krs')], BOARD);
    assert.deepEqual(mergeSnapshots(null, incoming), company([NIP, KRS], [profile('krs')], BOARD));
  });

  it('unites identifiers by type, the incoming value winning', () => {
    const prev = company([NIP, KRS], [profile('krs')]);
    const incoming = company([{ type: 'NIP', value: '5261040828' }, REGON], [profile('bir')]);
    assert.deepEqual(mergeSnapshots(prev, incoming).identity.identifiers, [{ type: 'NIP', value: '5261040828' }, REGON, KRS]);
  });

  it('lets the first of repeated identifier types or sources in one report speak', () => {
    const incoming = company(
      [NIP, { type: 'NIP', value: '5261040828' }],
      [profile('krs', { name: 'PIERWSZA' }), profile('krs', { name: 'DRUGA' })],
    );
    const merged = mergeSnapshots(null, incoming);
    assert.deepEqual(merged.identity.identifiers, [NIP]);
    assert.deepEqual(
      merged.profiles.map((p) => p.name),
      ['PIERWSZA'],
    );
  });

  it('keeps company type and country when the incoming source leaves them empty', () => {
    const prev = company([NIP], [profile('krs')], [], 'P');
    const incoming: CompanySnapshot = {
      ...company([NIP], [profile('vat')]),
      identity: { identifiers: [NIP], company_type: '', country_code: ' ' },
    };
    const merged = mergeSnapshots(prev, incoming);
    assert.equal(merged.identity.company_type, 'P');
    assert.equal(merged.identity.country_code, 'PL');
    assert.equal(mergeSnapshots(prev, company([NIP], [profile('bir')], [], 'F')).identity.company_type, 'F');
  });

  it('replaces the profile of the reporting source and keeps the others, ordered by source', () => {
    const prev = company([NIP], [profile('vat', { vat_status: 'Czynny' }), profile('krs')]);
    const incoming = company([NIP], [profile('vat', { vat_status: 'Zwolniony' })]);
    const merged = mergeSnapshots(prev, incoming);
    assert.deepEqual(
      merged.profiles.map((p) => [p.source, p.vat_status]),
      [
        ['krs', null],
        ['vat', 'Zwolniony'],
      ],
    );
    assert.deepEqual(merged.profiles[0], profile('krs'));
  });

  it('keeps the persons when the reporting source does not cover persons', () => {
    const prev = company([NIP], [profile('krs')], BOARD);
    assert.deepEqual(mergeSnapshots(prev, company([NIP], [profile('bir')])).persons, BOARD);
    assert.deepEqual(mergeSnapshots(prev, company([NIP], [profile('vat')])).persons, BOARD);
  });

  it('takes the persons of a source that covers them, even an empty list', () => {
    const prev = company([NIP], [profile('krs')], BOARD);
    for (const source of ['krs', 'ceidg', 'synthetic', 'file'] as const) {
      assert.deepEqual(mergeSnapshots(prev, company([NIP], [profile(source)])).persons, [], source);
    }
    const partners = [{ full_name: 'Anna Nowak', role: 'WSPÓLNIK' }];
    assert.deepEqual(mergeSnapshots(prev, company([NIP], [profile('bir')], partners)).persons, partners);
  });

  it('leaves its inputs untouched', () => {
    const prev = company([KRS, NIP], [profile('vat'), profile('krs')], BOARD);
    const incoming = company([REGON], [profile('bir')]);
    const before = structuredClone([prev, incoming]);
    mergeSnapshots(prev, incoming);
    assert.deepEqual([prev, incoming], before);
  });

  it('yields no events when a source without persons reports after KRS', () => {
    const afterKrs = mergeSnapshots(null, company([NIP, KRS], [profile('krs')], BOARD));
    const afterBir = mergeSnapshots(afterKrs, company([NIP, REGON], [profile('bir')]));
    assert.deepEqual(diffSnapshots(afterKrs, afterBir), []);
    const afterVat = mergeSnapshots(afterBir, company([NIP], [profile('vat', { vat_status: 'Czynny' })]));
    assert.deepEqual(diffSnapshots(afterBir, afterVat), []);
    const vatChange = mergeSnapshots(afterVat, company([NIP], [profile('vat', { vat_status: 'Niezarejestrowany' })]));
    assert.deepEqual(diffSnapshots(afterVat, vatChange), [
      { event_type: 'COMPANY_VAT_STATUS_CHANGED', old_value: 'Czynny', new_value: 'Niezarejestrowany', severity: 'warning' },
    ]);
  });
});

describe('deriveStatus', () => {
  const dates = (...entries: Array<[DatedEntry['type'], string]>) => entries.map(([type, date]) => ({ type, date }));
  const table: Array<[string, Profile[], string]> = [
    ['no profiles', [], 'ACTIVE'],
    ['an active profile', [profile('krs')], 'ACTIVE'],
    ['a deletion date', [profile('bir', { status: '', dates: dates(['deletion', '2024-01-01']) })], 'DELETED'],
    ['a closure date', [profile('ceidg', { dates: dates(['closure', '2024-01-01']) })], 'DELETED'],
    ['label wykreślony', [profile('krs', { status: 'wykreślony' })], 'DELETED'],
    ['label WYKREŚLONA', [profile('krs', { status: 'WYKREŚLONA' })], 'DELETED'],
    ['label skreślony', [profile('bir', { status: 'Skreślony' })], 'DELETED'],
    ['label zamknięty', [profile('ceidg', { status: 'zamknięty' })], 'DELETED'],
    ['label DELETED', [profile('file', { status: 'DELETED' })], 'DELETED'],
    ['deleted in one of two profiles', [profile('krs'), profile('bir', { dates: dates(['deletion', '2024-01-01']) })], 'DELETED'],
    ['deleted beats suspended', [profile('ceidg', { status: 'zawieszony', dates: dates(['closure', '2024-01-01']) })], 'DELETED'],
    ['label zawieszony', [profile('ceidg', { status: 'zawieszony' })], 'SUSPENDED'],
    ['label SUSPENDED', [profile('file', { status: 'SUSPENDED' })], 'SUSPENDED'],
    ['a suspension date alone', [profile('bir', { dates: dates(['suspension', '2024-01-01']) })], 'SUSPENDED'],
    [
      'suspended after the last resumption',
      [profile('bir', { dates: dates(['suspension', '2022-01-01'], ['resumption', '2023-01-01'], ['suspension', '2024-01-01']) })],
      'SUSPENDED',
    ],
    [
      'resumed after the suspension',
      [profile('bir', { dates: dates(['suspension', '2024-01-01'], ['resumption', '2024-06-01']) })],
      'ACTIVE',
    ],
    ['resumed the same day', [profile('bir', { dates: dates(['suspension', '2024-01-01'], ['resumption', '2024-01-01']) })], 'ACTIVE'],
    ['in liquidation is still active', [profile('krs', { dates: dates(['liquidation_start', '2024-01-01']) })], 'ACTIVE'],
    [
      'a closed local unit does not close the company',
      [profile('bir', { units: [{ identifier: '30199146600023', name: 'X', address: null, dates: dates(['closure', '2024-01-01']) }] })],
      'ACTIVE',
    ],
  ];
  for (const [name, profiles, expected] of table) {
    it(`${name} -> ${expected}`, () => assert.equal(deriveStatus(company([NIP], profiles)), expected));
  }
});

describe('primaryIdentifier', () => {
  it('prefers NIP, then KRS, then REGON9', () => {
    assert.deepEqual(primaryIdentifier(company([REGON, KRS, NIP], [])), NIP);
    assert.deepEqual(primaryIdentifier(company([REGON, KRS], [])), KRS);
    assert.deepEqual(primaryIdentifier(company([REGON], [])), REGON);
  });
  it('refuses a snapshot without identifiers', () => {
    assert.throws(() => primaryIdentifier(company([], [])), /at least one identifier/);
  });
});

// ---------------------------------------------------------------------------------------------

const SOURCES: SourceName[] = ['krs', 'bir', 'ceidg', 'vat', 'synthetic', 'file'];
const word = fc.constantFrom('', 'A', 'B', 'Ż');
const dated = fc.record({ type: fc.constantFrom(...DATE_TYPES), date: fc.constantFrom('2020-01-01', '2021-01-01') });
const profileArb = fc.record({
  source: fc.constantFrom(...SOURCES),
  name: word,
  status: fc.constantFrom('aktywny', 'zawieszony', 'wykreślony'),
  legal_form: word,
  address: fc.constant(null),
  units: fc.array(
    fc.record({
      identifier: fc.constantFrom('U1', 'U2'),
      name: word,
      address: fc.constant(null),
      dates: fc.array(dated, { maxLength: 2 }),
    }),
    { maxLength: 3 },
  ),
  contacts: fc.array(fc.record({ type: fc.constantFrom('phone' as const, 'email' as const, 'fax' as const), value: word }), {
    maxLength: 3,
  }),
  activities: fc.array(fc.record({ code: fc.constantFrom('6201Z', '4711Z'), name: word, is_primary: fc.boolean() }), { maxLength: 3 }),
  dates: fc.array(dated, { maxLength: 4 }),
  websites: fc.array(word, { maxLength: 2 }),
  vat_status: fc.option(fc.constant('Czynny')),
  bank_accounts: fc.array(fc.constantFrom('1', '2'), { maxLength: 2 }),
});
const snapshotArb: fc.Arbitrary<CompanySnapshot> = fc.record({
  identity: fc.record({
    identifiers: fc.array(
      fc.record({ type: fc.constantFrom('NIP' as const, 'KRS' as const, 'REGON9' as const), value: fc.constantFrom('1', '2') }),
      { maxLength: 3 },
    ),
    company_type: fc.constantFrom('', 'P', 'F'),
    country_code: fc.constantFrom('', 'PL'),
  }),
  profiles: fc.array(profileArb, { maxLength: 3 }),
  persons: fc.array(fc.record({ full_name: word, role: word }), { maxLength: 3 }),
});

function reversedEverywhere(s: CompanySnapshot): CompanySnapshot {
  return {
    identity: { ...s.identity, identifiers: [...s.identity.identifiers].reverse() },
    persons: [...s.persons].reverse(),
    profiles: [...s.profiles].reverse().map((p) => ({
      ...p,
      units: [...p.units].reverse().map((u) => ({ ...u, dates: [...u.dates].reverse() })),
      contacts: [...p.contacts].reverse(),
      activities: [...p.activities].reverse(),
      dates: [...p.dates].reverse(),
      websites: [...p.websites].reverse(),
      bank_accounts: [...p.bank_accounts].reverse(),
    })),
  };
}

// What a source may hand over: any of a profile's lists or its VAT status missing, units without an address.
const looseSnapshotArb: fc.Arbitrary<CompanySnapshot> = fc.record({
  identity: snapshotArb.map((x) => x.identity),
  profiles: fc.array(
    fc.record(
      {
        source: fc.constantFrom(...SOURCES),
        name: word,
        status: word,
        legal_form: word,
        address: fc.constant(null),
        units: fc.array(
          fc.record(
            { identifier: fc.constantFrom('U1', 'U2'), name: word, dates: fc.array(dated, { maxLength: 2 }) },
            { requiredKeys: ['identifier', 'name'] },
          ),
          { maxLength: 2 },
        ),
        contacts: profileArb.map((p) => p.contacts),
        activities: profileArb.map((p) => p.activities),
        dates: fc.array(dated, { maxLength: 4 }),
        websites: fc.array(word, { maxLength: 2 }),
        vat_status: fc.option(fc.constant('Czynny')),
        bank_accounts: fc.array(fc.constantFrom('1', '2'), { maxLength: 2 }),
      },
      { requiredKeys: ['source', 'name', 'status', 'legal_form'] },
    ),
    { maxLength: 3 },
  ),
  persons: fc.array(fc.record({ full_name: word, role: word }), { maxLength: 3 }),
}) as unknown as fc.Arbitrary<CompanySnapshot>;

describe('properties', () => {
  it('when mergeIsIncoming says so, merging yields the canonical incoming snapshot, to the byte', () => {
    let applied = 0;
    fc.assert(
      fc.property(snapshotArb, snapshotArb, fc.boolean(), (p, i, sameShape) => {
        const prev = mergeSnapshots(null, p);
        // Half the cases: the incoming report names what prev has (the everyday case), so the fast path is exercised.
        const raw = sameShape
          ? {
              ...i,
              identity: { ...i.identity, identifiers: prev.identity.identifiers.map((x) => ({ ...x, value: x.value + '9' })) },
              profiles: [...i.profiles, ...prev.profiles.map((x) => ({ ...x, name: x.name + 'X' }))],
            }
          : i;
        const incoming = mergeSnapshots(null, raw);
        if (!mergeIsIncoming(prev, incoming)) return;
        applied++;
        assert.equal(JSON.stringify(mergeSnapshots(prev, incoming)), JSON.stringify(incoming));
      }),
      { numRuns: 2000 },
    );
    assert.ok(applied > 300, `the fast path applied in ${applied} of 2000 cases`);
  });

  it('canonicalizeOwned(x) serialises exactly as mergeSnapshots(null, x)', () => {
    fc.assert(
      fc.property(fc.oneof(snapshotArb, looseSnapshotArb), (s) => {
        assert.equal(JSON.stringify(canonicalizeOwned(structuredClone(s))), JSON.stringify(mergeSnapshots(null, s)));
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const expected = JSON.stringify(mergeSnapshots(null, s));
        assert.equal(JSON.stringify(canonicalizeOwned(structuredClone(reversedEverywhere(mergeSnapshots(null, s))))), expected);
      }),
      { numRuns: 500 },
    );
  });

  it('canonicalize does not depend on the input order and is idempotent', () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const canonical = canonicalize(s);
        assert.deepEqual(canonicalize(reversedEverywhere(s)), canonical);
        assert.deepEqual(canonicalize(canonical), canonical);
        assert.equal(JSON.stringify(canonicalize(structuredClone(s))), JSON.stringify(canonical));
      }),
      { numRuns: 500 },
    );
  });

  it('merging the same report twice changes nothing and yields no events', () => {
    fc.assert(
      fc.property(fc.option(snapshotArb), snapshotArb, (prev, incoming) => {
        const once = mergeSnapshots(prev, incoming);
        const twice = mergeSnapshots(once, incoming);
        assert.deepEqual(twice, once);
        assert.deepEqual(diffSnapshots(once, twice), []);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every profile of a source that did not report', () => {
    fc.assert(
      fc.property(snapshotArb, snapshotArb, (prev, incoming) => {
        const merged = mergeSnapshots(prev, incoming);
        const reported = new Set(incoming.profiles.map((p) => p.source));
        const expectedSources = new Set([...prev.profiles.map((p) => p.source), ...reported]);
        assert.deepEqual(
          merged.profiles.map((p) => p.source),
          [...expectedSources].sort(),
        );
        for (const p of merged.profiles) {
          const origin = reported.has(p.source) ? incoming : prev;
          assert.deepEqual(p, canonicalize({ ...origin, profiles: [origin.profiles.find((q) => q.source === p.source)!] }).profiles[0]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
