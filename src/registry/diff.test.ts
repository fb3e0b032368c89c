import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { diffSnapshots, isDeletedStatusLabel, isSuspendedStatusLabel } from './diff.ts';
import { formatAddress, formatPerson, formatUnit, joinSorted } from './format.ts';
import {
  DATE_TYPES,
  EVENT_TYPES,
  type Address,
  type CompanySnapshot,
  type DateType,
  type DetectedEvent,
  type EventType,
  type Profile,
  type SourceName,
} from './model.ts';
import { nipCheckDigit } from '../lib/identifiers.ts';

const ADDRESS: Address = {
  street: 'ul. Chemików',
  building: '7',
  apartment: '',
  city: 'Płock',
  postal_code: '09411',
  voivodeship: 'mazowieckie',
  country_code: 'PL',
};

function profile(source: SourceName, overrides: Partial<Profile> = {}): Profile {
  return {
    source,
    name: 'ORLEN SPÓŁKA AKCYJNA',
    status: 'aktywny',
    legal_form: 'SPÓŁKA AKCYJNA',
    address: { ...ADDRESS },
    units: [
      { identifier: '61018820100023', name: 'ODDZIAŁ GDAŃSK', address: null, dates: [] },
      { identifier: '61018820100045', name: 'ODDZIAŁ KRAKÓW', address: null, dates: [] },
    ],
    contacts: [
      { type: 'email', value: 'biuro@orlen.pl' },
      { type: 'phone', value: '+48 24 256 00 00' },
      { type: 'fax', value: '+48 24 256 00 01' },
    ],
    activities: [
      { code: '1920Z', name: 'WYTWARZANIE PRODUKTÓW RAFINACJI ROPY NAFTOWEJ', is_primary: true },
      { code: '4671Z', name: 'SPRZEDAŻ HURTOWA PALIW', is_primary: false },
    ],
    dates: [
      { type: 'registration', date: '2001-07-26' },
      { type: 'activity_start', date: '1993-06-29' },
    ],
    websites: ['https://www.orlen.pl'],
    vat_status: 'Czynny',
    bank_accounts: ['11102015200000020200067868', '23124010371111000016436567'],
    ...overrides,
  };
}

function snapshot(overrides: Partial<CompanySnapshot> = {}): CompanySnapshot {
  return {
    identity: {
      identifiers: [
        { type: 'NIP', value: '7740001454' },
        { type: 'REGON9', value: '610188201' },
        { type: 'KRS', value: '0000028860' },
      ],
      company_type: 'P',
      country_code: 'PL',
    },
    profiles: [profile('krs')],
    persons: [
      { full_name: 'Jan Kowalski', role: 'PREZES ZARZĄDU' },
      { full_name: 'Anna Nowak', role: 'CZŁONEK ZARZĄDU' },
    ],
    ...overrides,
  };
}

/** A deep copy whose single krs profile is changed by `edit`. */
function withProfile(edit: (p: Profile) => void, base: CompanySnapshot = snapshot()): CompanySnapshot {
  const copy = structuredClone(base);
  edit(copy.profiles[0]!);
  return copy;
}

function event(
  event_type: EventType,
  old_value: string | null,
  new_value: string | null,
  severity: DetectedEvent['severity'],
): DetectedEvent {
  return { event_type, old_value, new_value, severity };
}

interface Case {
  type: EventType;
  next: CompanySnapshot;
  prev?: CompanySnapshot;
  expected: DetectedEvent[];
}

const CASES: Case[] = [
  {
    type: 'COMPANY_NAME_CHANGED',
    next: withProfile((p) => {
      p.name = 'ORLEN SPÓŁKA AKCYJNA W LIKWIDACJI';
    }),
    expected: [event('COMPANY_NAME_CHANGED', 'ORLEN SPÓŁKA AKCYJNA', 'ORLEN SPÓŁKA AKCYJNA W LIKWIDACJI', 'info')],
  },
  {
    type: 'COMPANY_LEGAL_FORM_CHANGED',
    next: withProfile((p) => {
      p.legal_form = 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ';
    }),
    expected: [event('COMPANY_LEGAL_FORM_CHANGED', 'SPÓŁKA AKCYJNA', 'SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'warning')],
  },
  {
    type: 'COMPANY_TAX_IDENTITY_CHANGED',
    next: (() => {
      const s = snapshot();
      s.identity.identifiers[0] = { type: 'NIP', value: '5261040828' };
      return s;
    })(),
    expected: [event('COMPANY_TAX_IDENTITY_CHANGED', '7740001454', '5261040828', 'info')],
  },
  {
    type: 'COMPANY_REGISTERED_ADDRESS_ADDED',
    prev: withProfile((p) => {
      p.address = null;
    }),
    next: snapshot(),
    expected: [event('COMPANY_REGISTERED_ADDRESS_ADDED', null, 'ul. Chemików 7, 09-411 Płock', 'info')],
  },
  {
    type: 'COMPANY_REGISTERED_ADDRESS_CHANGED',
    next: withProfile((p) => {
      p.address = { ...ADDRESS, street: 'ul. Łukasiewicza', building: '39', apartment: '4', postal_code: '09-400' };
    }),
    expected: [event('COMPANY_REGISTERED_ADDRESS_CHANGED', 'ul. Chemików 7, 09-411 Płock', 'ul. Łukasiewicza 39/4, 09-400 Płock', 'info')],
  },
  {
    type: 'COMPANY_ACTIVITIES_ADDED',
    next: withProfile((p) => {
      p.activities.push({ code: '4730Z', name: 'SPRZEDAŻ DETALICZNA PALIW', is_primary: false });
      p.activities.push({ code: '0610Z', name: 'GÓRNICTWO ROPY NAFTOWEJ', is_primary: false });
    }),
    expected: [event('COMPANY_ACTIVITIES_ADDED', null, '0610Z, 4730Z', 'info')],
  },
  {
    type: 'COMPANY_ACTIVITIES_REMOVED',
    next: withProfile((p) => {
      p.activities = p.activities.filter((a) => a.code !== '4671Z');
    }),
    expected: [event('COMPANY_ACTIVITIES_REMOVED', '4671Z', null, 'info')],
  },
  {
    type: 'COMPANY_ACTIVITIES_CHANGED',
    next: withProfile((p) => {
      p.activities[1]!.name = 'SPRZEDAŻ HURTOWA PALIW I PRODUKTÓW POCHODNYCH';
    }),
    expected: [
      event('COMPANY_ACTIVITIES_CHANGED', '4671Z SPRZEDAŻ HURTOWA PALIW', '4671Z SPRZEDAŻ HURTOWA PALIW I PRODUKTÓW POCHODNYCH', 'info'),
    ],
  },
  {
    type: 'COMPANY_MAIN_ACTIVITY_CHANGED',
    next: withProfile((p) => {
      p.activities[0]!.is_primary = false;
      p.activities[1]!.is_primary = true;
    }),
    expected: [event('COMPANY_MAIN_ACTIVITY_CHANGED', '1920Z', '4671Z', 'info')],
  },
  {
    type: 'COMPANY_SUSPENDED_DATE',
    next: withProfile((p) => {
      p.dates.push({ type: 'suspension', date: '2026-03-01' });
    }),
    expected: [event('COMPANY_SUSPENDED_DATE', null, '2026-03-01', 'warning')],
  },
  {
    type: 'COMPANY_RESUMPTION_DATE',
    prev: withProfile((p) => {
      p.dates.push({ type: 'resumption', date: '2024-01-01' });
    }),
    next: withProfile((p) => {
      p.dates.push({ type: 'resumption', date: '2024-01-01' }, { type: 'resumption', date: '2026-04-01' });
    }),
    expected: [event('COMPANY_RESUMPTION_DATE', '2024-01-01', '2026-04-01', 'info')],
  },
  {
    type: 'COMPANY_CLOSED_DATE',
    next: withProfile((p) => {
      p.dates.push({ type: 'closure', date: '2026-05-31' });
    }),
    expected: [event('COMPANY_CLOSED_DATE', null, '2026-05-31', 'critical')],
  },
  {
    type: 'COMPANY_START_DATE_CHANGE',
    next: withProfile((p) => {
      p.dates[1]!.date = '1993-07-01';
    }),
    expected: [event('COMPANY_START_DATE_CHANGE', '1993-06-29', '1993-07-01', 'info')],
  },
  {
    type: 'COMPANY_STATUS_CHANGED',
    next: withProfile((p) => {
      p.status = 'wykreślony';
    }),
    expected: [event('COMPANY_STATUS_CHANGED', 'aktywny', 'wykreślony', 'critical')],
  },
  {
    type: 'COMPANY_BANKRUPTCY_STARTED',
    next: withProfile((p) => {
      p.dates.push({ type: 'bankruptcy_start', date: '2026-02-10' });
    }),
    expected: [event('COMPANY_BANKRUPTCY_STARTED', null, '2026-02-10', 'critical')],
  },
  {
    type: 'COMPANY_BANKRUPTCY_ENDED',
    next: withProfile((p) => {
      p.dates.push({ type: 'bankruptcy_end', date: '2026-02-11' });
    }),
    expected: [event('COMPANY_BANKRUPTCY_ENDED', null, '2026-02-11', 'info')],
  },
  {
    type: 'COMPANY_LIQUIDATION_STARTED',
    next: withProfile((p) => {
      p.dates.push({ type: 'liquidation_start', date: '2026-02-12' });
    }),
    expected: [event('COMPANY_LIQUIDATION_STARTED', null, '2026-02-12', 'critical')],
  },
  {
    type: 'COMPANY_LIQUIDATION_ENDED',
    next: withProfile((p) => {
      p.dates.push({ type: 'liquidation_end', date: '2026-02-13' });
    }),
    expected: [event('COMPANY_LIQUIDATION_ENDED', null, '2026-02-13', 'info')],
  },
  {
    type: 'COMPANY_RESTRUCTURING_STARTED',
    next: withProfile((p) => {
      p.dates.push({ type: 'restructuring_start', date: '2026-02-14' });
    }),
    expected: [event('COMPANY_RESTRUCTURING_STARTED', null, '2026-02-14', 'critical')],
  },
  {
    type: 'COMPANY_RESTRUCTURING_ENDED',
    next: withProfile((p) => {
      p.dates.push({ type: 'restructuring_end', date: '2026-02-15' });
    }),
    expected: [event('COMPANY_RESTRUCTURING_ENDED', null, '2026-02-15', 'info')],
  },
  {
    type: 'COMPANY_EMAIL_CHANGED',
    next: withProfile((p) => {
      p.contacts.push({ type: 'email', value: 'ir@orlen.pl' });
    }),
    expected: [event('COMPANY_EMAIL_CHANGED', 'biuro@orlen.pl', 'biuro@orlen.pl, ir@orlen.pl', 'info')],
  },
  {
    type: 'COMPANY_PHONE_CHANGED',
    next: withProfile((p) => {
      p.contacts = p.contacts.filter((c) => c.type !== 'phone');
    }),
    expected: [event('COMPANY_PHONE_CHANGED', '+48 24 256 00 00', null, 'info')],
  },
  {
    type: 'COMPANY_WEBSITE_CHANGED',
    next: withProfile((p) => {
      p.websites = ['https://orlen.pl'];
    }),
    expected: [event('COMPANY_WEBSITE_CHANGED', 'https://www.orlen.pl', 'https://orlen.pl', 'info')],
  },
  {
    type: 'COMPANY_UNIT_OPENED',
    next: withProfile((p) => {
      p.units.push({ identifier: '61018820100067', name: 'ODDZIAŁ POZNAŃ', address: null, dates: [] });
    }),
    expected: [event('COMPANY_UNIT_OPENED', null, '61018820100067 ODDZIAŁ POZNAŃ', 'info')],
  },
  {
    type: 'COMPANY_UNIT_CLOSED',
    next: withProfile((p) => {
      p.units[0]!.dates.push({ type: 'closure', date: '2026-01-31' });
    }),
    expected: [event('COMPANY_UNIT_CLOSED', '61018820100023 ODDZIAŁ GDAŃSK', null, 'info')],
  },
  {
    type: 'COMPANY_PERSON_ADDED',
    next: snapshot({ persons: [...snapshot().persons, { full_name: 'Ewa Wiśniewska', role: 'PROKURENT' }] }),
    expected: [event('COMPANY_PERSON_ADDED', null, 'Ewa Wiśniewska (PROKURENT)', 'warning')],
  },
  {
    type: 'COMPANY_PERSON_REMOVED',
    next: snapshot({ persons: [{ full_name: 'Jan Kowalski', role: 'PREZES ZARZĄDU' }] }),
    expected: [event('COMPANY_PERSON_REMOVED', 'Anna Nowak (CZŁONEK ZARZĄDU)', null, 'warning')],
  },
  {
    type: 'COMPANY_VAT_STATUS_CHANGED',
    next: withProfile((p) => {
      p.vat_status = 'Zwolniony';
    }),
    expected: [event('COMPANY_VAT_STATUS_CHANGED', 'Czynny', 'Zwolniony', 'warning')],
  },
  {
    type: 'COMPANY_BANK_ACCOUNTS_CHANGED',
    next: withProfile((p) => {
      p.bank_accounts = ['23124010371111000016436567', '02102015200000020200067869'];
    }),
    expected: [
      event(
        'COMPANY_BANK_ACCOUNTS_CHANGED',
        '11102015200000020200067868, 23124010371111000016436567',
        '02102015200000020200067869, 23124010371111000016436567',
        'warning',
      ),
    ],
  },
];

describe('diffSnapshots: one case per event type', () => {
  it('covers all 29 event types', () => {
    assert.equal(EVENT_TYPES.length, 29);
    assert.deepEqual(new Set(CASES.map((c) => c.type)), new Set(EVENT_TYPES));
  });

  for (const c of CASES) {
    it(c.type, () => assert.deepEqual(diffSnapshots(c.prev ?? snapshot(), c.next), c.expected));
  }
});

describe('diffSnapshots: rules', () => {
  it('finds nothing between a snapshot and its copy', () => {
    assert.deepEqual(diffSnapshots(snapshot(), structuredClone(snapshot())), []);
  });

  it('gives a non-deleted status change info severity', () => {
    const next = withProfile((p) => {
      p.status = 'zawieszony';
    });
    assert.deepEqual(diffSnapshots(snapshot(), next), [event('COMPANY_STATUS_CHANGED', 'aktywny', 'zawieszony', 'info')]);
  });

  it('reports a change seen in two profiles once', () => {
    const prev = snapshot({ profiles: [profile('krs'), profile('bir')] });
    const next = snapshot({ profiles: [profile('krs', { name: 'ORLEN' }), profile('bir', { name: 'ORLEN' })] });
    assert.deepEqual(diffSnapshots(prev, next), [event('COMPANY_NAME_CHANGED', 'ORLEN SPÓŁKA AKCYJNA', 'ORLEN', 'info')]);
  });

  it('reports different changes of two profiles separately', () => {
    const prev = snapshot({ profiles: [profile('krs'), profile('bir', { name: 'ORLEN S.A.' })] });
    const next = snapshot({ profiles: [profile('krs', { name: 'ORLEN' }), profile('bir', { name: 'ORLEN' })] });
    assert.deepEqual(
      diffSnapshots(prev, next).map((e) => e.old_value),
      ['ORLEN SPÓŁKA AKCYJNA', 'ORLEN S.A.'],
    );
  });

  it('compares profiles by source, not by position', () => {
    const prev = snapshot({ profiles: [profile('krs'), profile('vat', { vat_status: 'Czynny' })] });
    const next = snapshot({ profiles: [profile('vat', { vat_status: 'Niezarejestrowany' }), profile('krs')] });
    assert.deepEqual(diffSnapshots(prev, next), [event('COMPANY_VAT_STATUS_CHANGED', 'Czynny', 'Niezarejestrowany', 'warning')]);
  });

  it("the white list's status change is its VAT status change only, not the company's status change", () => {
    // As the VAT mapper makes its profile: the white list's one status is both its status and its VAT status.
    const prev = snapshot({ profiles: [profile('krs'), profile('vat', { status: 'Czynny', vat_status: 'Czynny' })] });
    const next = snapshot({ profiles: [profile('krs'), profile('vat', { status: 'Zwolniony', vat_status: 'Zwolniony' })] });
    assert.deepEqual(diffSnapshots(prev, next), [event('COMPANY_VAT_STATUS_CHANGED', 'Czynny', 'Zwolniony', 'warning')]);
  });

  it('an e-mail address whose letter case alone changed is the same mailbox: no event; another address is one', () => {
    const prev = withProfile((p) => {
      p.contacts = [{ type: 'email', value: 'Biuro@Orlen.pl' }];
    });
    const upper = withProfile((p) => {
      p.contacts = [{ type: 'email', value: 'BIURO@ORLEN.PL' }];
    });
    assert.deepEqual(diffSnapshots(prev, upper), []);
    const other = withProfile((p) => {
      p.contacts = [{ type: 'email', value: 'BIURO2@ORLEN.PL' }];
    });
    assert.deepEqual(diffSnapshots(prev, other), [event('COMPANY_EMAIL_CHANGED', 'Biuro@Orlen.pl', 'BIURO2@ORLEN.PL', 'info')]);
  });

  it('ignores a source that appears or disappears, even with different values', () => {
    const prev = snapshot({ profiles: [profile('krs')] });
    const next = snapshot({
      profiles: [profile('krs'), profile('ceidg', { name: 'INNA NAZWA', address: null, activities: [], contacts: [] })],
    });
    assert.deepEqual(diffSnapshots(prev, next), []);
    assert.deepEqual(diffSnapshots(next, prev), []);
  });

  it('does not report a single value that disappears', () => {
    const next = withProfile((p) => {
      p.name = '';
      p.status = '  ';
      p.vat_status = null;
      p.address = null;
      p.dates = [{ type: 'registration', date: '2001-07-26' }];
      p.activities = p.activities.map((a) => ({ ...a, is_primary: false }));
    });
    assert.deepEqual(diffSnapshots(snapshot(), next), []);
    const noNip = snapshot();
    noNip.identity.identifiers = noNip.identity.identifiers.filter((i) => i.type !== 'NIP');
    assert.deepEqual(diffSnapshots(snapshot(), noNip), []);
  });

  it('reports a NIP assigned for the first time', () => {
    const noNip = snapshot();
    noNip.identity.identifiers = noNip.identity.identifiers.filter((i) => i.type !== 'NIP');
    assert.deepEqual(diffSnapshots(noNip, snapshot()), [event('COMPANY_TAX_IDENTITY_CHANGED', null, '7740001454', 'info')]);
  });

  it('reports a list that becomes empty, with null as the new value', () => {
    const next = withProfile((p) => {
      p.websites = [];
      p.bank_accounts = [];
      p.contacts = [];
    });
    assert.deepEqual(diffSnapshots(snapshot(), next), [
      event('COMPANY_EMAIL_CHANGED', 'biuro@orlen.pl', null, 'info'),
      event('COMPANY_PHONE_CHANGED', '+48 24 256 00 00', null, 'info'),
      event('COMPANY_WEBSITE_CHANGED', 'https://www.orlen.pl', null, 'info'),
      event('COMPANY_BANK_ACCOUNTS_CHANGED', '11102015200000020200067868, 23124010371111000016436567', null, 'warning'),
    ]);
  });

  it('ignores fax numbers and registration dates, which have no event type', () => {
    const next = withProfile((p) => {
      p.contacts = p.contacts.map((c) => (c.type === 'fax' ? { ...c, value: '+48 1' } : c));
      p.dates[0]!.date = '2001-07-27';
    });
    assert.deepEqual(diffSnapshots(snapshot(), next), []);
  });

  it('uses the deletion date as the closure date when there is no closure date', () => {
    const deleted = withProfile((p) => {
      p.dates.push({ type: 'deletion', date: '2026-06-30' });
    });
    assert.deepEqual(diffSnapshots(snapshot(), deleted), [event('COMPANY_CLOSED_DATE', null, '2026-06-30', 'critical')]);
    const closedToo = withProfile((p) => {
      p.dates.push({ type: 'closure', date: '2026-06-15' });
    }, deleted);
    assert.deepEqual(diffSnapshots(deleted, closedToo), [event('COMPANY_CLOSED_DATE', '2026-06-30', '2026-06-15', 'critical')]);
  });

  it('closes a unit that disappears, and neither opens nor closes a unit already closed', () => {
    const gone = withProfile((p) => {
      p.units = p.units.slice(1);
    });
    assert.deepEqual(diffSnapshots(snapshot(), gone), [event('COMPANY_UNIT_CLOSED', '61018820100023 ODDZIAŁ GDAŃSK', null, 'info')]);
    const closed = withProfile((p) => {
      p.units[0]!.dates.push({ type: 'closure', date: '2026-01-31' });
    });
    assert.deepEqual(diffSnapshots(closed, gone), []);
    const arrivesClosed = withProfile((p) => {
      p.units.push({ identifier: '61018820100067', name: 'X', address: null, dates: [{ type: 'closure', date: '2020-01-01' }] });
    });
    assert.deepEqual(diffSnapshots(snapshot(), arrivesClosed), []);
  });

  it('reports one event per person added or removed, a changed role as both', () => {
    const next = snapshot({
      persons: [
        { full_name: 'Jan Kowalski', role: 'CZŁONEK ZARZĄDU' },
        { full_name: 'Anna Nowak', role: 'CZŁONEK ZARZĄDU' },
        { full_name: 'Piotr Zieliński', role: 'PROKURENT' },
      ],
    });
    assert.deepEqual(diffSnapshots(snapshot(), next), [
      event('COMPANY_PERSON_ADDED', null, 'Jan Kowalski (CZŁONEK ZARZĄDU)', 'warning'),
      event('COMPANY_PERSON_ADDED', null, 'Piotr Zieliński (PROKURENT)', 'warning'),
      event('COMPANY_PERSON_REMOVED', 'Jan Kowalski (PREZES ZARZĄDU)', null, 'warning'),
    ]);
  });

  it('reports one event per renamed activity code and an address line without a street', () => {
    const next = withProfile((p) => {
      p.activities[0]!.name = 'A';
      p.activities[1]!.name = 'B';
      p.address = { ...ADDRESS, street: '' };
    });
    assert.deepEqual(diffSnapshots(snapshot(), next), [
      event('COMPANY_REGISTERED_ADDRESS_CHANGED', 'ul. Chemików 7, 09-411 Płock', '7, 09-411 Płock', 'info'),
      event('COMPANY_ACTIVITIES_CHANGED', '1920Z WYTWARZANIE PRODUKTÓW RAFINACJI ROPY NAFTOWEJ', '1920Z A', 'info'),
      event('COMPANY_ACTIVITIES_CHANGED', '4671Z SPRZEDAŻ HURTOWA PALIW', '4671Z B', 'info'),
    ]);
  });
});

describe('status labels', () => {
  for (const s of ['wykreślony', 'WYKREŚLONA', 'wykreslony z rejestru', 'skreślony', 'Zamknięty', 'DELETED', 'WYKRESLONY']) {
    it(`${s} is deleted`, () => assert.equal(isDeletedStatusLabel(s), true));
  }
  for (const s of ['aktywny', 'zawieszony', 'niezamknięty', 'AKTYWNY', '', 'Czynny']) {
    it(`${JSON.stringify(s)} is not deleted`, () => assert.equal(isDeletedStatusLabel(s), false));
  }
  for (const s of ['zawieszony', 'ZAWIESZONA', 'SUSPENDED']) {
    it(`${s} is suspended`, () => assert.equal(isSuspendedStatusLabel(s), true));
  }
  it('aktywny is not suspended', () => assert.equal(isSuspendedStatusLabel('aktywny'), false));
});

describe('value formats', () => {
  it('formats addresses, skipping empty parts', () => {
    assert.equal(formatAddress(ADDRESS), 'ul. Chemików 7, 09-411 Płock');
    assert.equal(formatAddress({ ...ADDRESS, apartment: '12' }), 'ul. Chemików 7/12, 09-411 Płock');
    assert.equal(formatAddress({ ...ADDRESS, street: '' }), '7, 09-411 Płock');
    assert.equal(formatAddress({ ...ADDRESS, street: '', building: '' }), '09-411 Płock');
    assert.equal(formatAddress({ ...ADDRESS, postal_code: '09-411' }), 'ul. Chemików 7, 09-411 Płock');
    assert.equal(formatAddress({ ...ADDRESS, postal_code: 'SW1A 1AA', city: 'London' }), 'ul. Chemików 7, SW1A 1AA London');
    assert.equal(formatAddress({ ...ADDRESS, postal_code: '', city: '' }), 'ul. Chemików 7');
    assert.equal(formatAddress({ ...ADDRESS, street: ' ', building: '', city: '', postal_code: '' }), null);
    assert.equal(formatAddress(null), null);
  });

  it('joins sorted distinct values', () => {
    assert.equal(joinSorted(['b', 'a', ' a ', '']), 'a, b');
    assert.equal(joinSorted([]), null);
  });

  it('formats units and persons', () => {
    assert.equal(formatUnit({ identifier: '61018820100023', name: 'ODDZIAŁ' }), '61018820100023 ODDZIAŁ');
    assert.equal(formatPerson({ full_name: 'Jan Kowalski', role: 'PREZES' }), 'Jan Kowalski (PREZES)');
    assert.equal(formatPerson({ full_name: 'Jan Kowalski', role: '' }), 'Jan Kowalski');
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests

const SOURCES: SourceName[] = ['krs', 'bir', 'ceidg', 'vat', 'synthetic', 'file'];
// Small alphabets, so that duplicates and collisions between generated values are common.
const word = fc.constantFrom('', 'A', 'B', 'Alfa', 'Beta', 'Łódź', ' A ');
const isoDate = fc.constantFrom('2020-01-01', '2021-06-30', '2022-12-31', '2024-02-29');
const code = fc.constantFrom('6201Z', '6202Z', '4711Z', '1920Z', '0111Z');
const dated = fc.record({ type: fc.constantFrom(...DATE_TYPES), date: isoDate });
const address = fc.option(
  fc.record({
    street: word,
    building: word,
    apartment: word,
    city: word,
    postal_code: fc.constantFrom('', '00950', '00-950'),
    voivodeship: word,
    country_code: fc.constant('PL'),
  }),
);
const unit = fc.record({
  identifier: fc.constantFrom('U1', 'U2', 'U3'),
  name: word,
  address: fc.constant(null),
  dates: fc.array(dated, { maxLength: 2 }),
});

const profileArb = (source: SourceName) =>
  fc.record({
    source: fc.constant(source),
    name: word,
    status: fc.constantFrom('aktywny', 'zawieszony', 'wykreślony', ''),
    legal_form: word,
    address,
    units: fc.array(unit, { maxLength: 4 }),
    contacts: fc.array(fc.record({ type: fc.constantFrom('phone' as const, 'email' as const, 'fax' as const), value: word }), {
      maxLength: 5,
    }),
    activities: fc.array(fc.record({ code, name: word, is_primary: fc.boolean() }), { maxLength: 5 }),
    dates: fc.array(dated, { maxLength: 6 }),
    websites: fc.array(word, { maxLength: 3 }),
    vat_status: fc.option(fc.constantFrom('Czynny', 'Zwolniony')),
    bank_accounts: fc.array(fc.constantFrom('111', '222', '333'), { maxLength: 3 }),
  });

const nipArb = fc
  .integer({ min: 100_000_000, max: 999_999_999 })
  .map(String)
  .filter((n) => nipCheckDigit(n) !== null)
  .map((n) => n + nipCheckDigit(n));

const snapshotArb: fc.Arbitrary<CompanySnapshot> = fc
  .record({
    sources: fc.uniqueArray(fc.constantFrom(...SOURCES), { minLength: 1, maxLength: 3 }),
    nip: fc.option(nipArb),
    persons: fc.array(fc.record({ full_name: fc.constantFrom('Jan', 'Anna', 'Ewa', ''), role: word }), { maxLength: 4 }),
  })
  .chain(({ sources, nip, persons }) =>
    fc.tuple(...sources.map(profileArb)).map((profiles) => ({
      identity: {
        identifiers: [{ type: 'KRS' as const, value: '0000028860' }, ...(nip === null ? [] : [{ type: 'NIP' as const, value: nip }])],
        company_type: 'P',
        country_code: 'PL',
      },
      profiles,
      persons,
    })),
  );

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function reorderEverything(s: CompanySnapshot, seed: number): CompanySnapshot {
  return {
    identity: { ...s.identity, identifiers: shuffled(s.identity.identifiers, seed) },
    persons: shuffled(s.persons, seed + 1),
    profiles: shuffled(s.profiles, seed + 2).map((p, i) => ({
      ...p,
      units: shuffled(p.units, seed + 3 + i).map((u) => ({ ...u, dates: shuffled(u.dates, seed + 4) })),
      contacts: shuffled(p.contacts, seed + 5 + i),
      activities: shuffled(p.activities, seed + 6 + i),
      dates: shuffled(p.dates, seed + 7 + i),
      websites: shuffled(p.websites, seed + 8 + i),
      bank_accounts: shuffled(p.bank_accounts, seed + 9 + i),
    })),
  };
}

/** A change to exactly one field of the first profile (or of the company) and the event type it must give. */
type Mutation = (s: CompanySnapshot) => { next: CompanySnapshot; expected: EventType } | null;

const DATE_EVENT: Partial<Record<DateType, EventType>> = {
  suspension: 'COMPANY_SUSPENDED_DATE',
  resumption: 'COMPANY_RESUMPTION_DATE',
  closure: 'COMPANY_CLOSED_DATE',
  activity_start: 'COMPANY_START_DATE_CHANGE',
  bankruptcy_start: 'COMPANY_BANKRUPTCY_STARTED',
  bankruptcy_end: 'COMPANY_BANKRUPTCY_ENDED',
  liquidation_start: 'COMPANY_LIQUIDATION_STARTED',
  liquidation_end: 'COMPANY_LIQUIDATION_ENDED',
  restructuring_start: 'COMPANY_RESTRUCTURING_STARTED',
  restructuring_end: 'COMPANY_RESTRUCTURING_ENDED',
};

function editFirstProfile(s: CompanySnapshot, expected: EventType, edit: (p: Profile) => boolean | void) {
  const next = structuredClone(s);
  return edit(next.profiles[0]!) === false ? null : { next, expected };
}

const isOpen = (u: { dates: { type: DateType }[] }) => !u.dates.some((d) => d.type === 'closure' || d.type === 'deletion');

const MUTATIONS: Record<string, Mutation> = {
  name: (s) =>
    editFirstProfile(s, 'COMPANY_NAME_CHANGED', (p) => {
      p.name = `${p.name} NOWA`;
    }),
  legalForm: (s) =>
    editFirstProfile(s, 'COMPANY_LEGAL_FORM_CHANGED', (p) => {
      p.legal_form = `${p.legal_form} INNA`;
    }),
  status: (s) =>
    editFirstProfile(s, 'COMPANY_STATUS_CHANGED', (p) => {
      // The white list's status is its VAT status (vatStatus below), not the company's.
      if (p.source === 'vat') return false;
      p.status = `${p.status} zmieniony`;
    }),
  vatStatus: (s) =>
    editFirstProfile(s, 'COMPANY_VAT_STATUS_CHANGED', (p) => {
      p.vat_status = `${p.vat_status ?? ''}Niezarejestrowany`;
    }),
  nip: (s) => {
    const next = structuredClone(s);
    next.identity.identifiers = [...next.identity.identifiers.filter((i) => i.type !== 'NIP'), { type: 'NIP', value: '5261040828' }];
    return s.identity.identifiers.some((i) => i.value === '5261040828') ? null : { next, expected: 'COMPANY_TAX_IDENTITY_CHANGED' };
  },
  address: (s) => {
    const before = formatAddress(s.profiles[0]!.address);
    return editFirstProfile(s, before === null ? 'COMPANY_REGISTERED_ADDRESS_ADDED' : 'COMPANY_REGISTERED_ADDRESS_CHANGED', (p) => {
      p.address = p.address === null ? { ...ADDRESS } : { ...p.address, city: `${p.address.city}X` };
    });
  },
  activityAdded: (s) =>
    editFirstProfile(s, 'COMPANY_ACTIVITIES_ADDED', (p) => {
      p.activities.push({ code: '9999Z', name: 'NOWA', is_primary: false });
    }),
  activityRemoved: (s) =>
    editFirstProfile(s, 'COMPANY_ACTIVITIES_REMOVED', (p) => {
      const removable = p.activities.find((a) => a.code.trim() && !p.activities.some((b) => b.code === a.code && b.is_primary));
      if (!removable) return false;
      p.activities = p.activities.filter((a) => a.code !== removable.code);
    }),
  activityRenamed: (s) =>
    editFirstProfile(s, 'COMPANY_ACTIVITIES_CHANGED', (p) => {
      const target = p.activities[0];
      if (!target) return false;
      for (const a of p.activities) if (a.code === target.code) a.name = 'ZUPEŁNIE NOWA NAZWA';
    }),
  email: (s) =>
    editFirstProfile(s, 'COMPANY_EMAIL_CHANGED', (p) => {
      p.contacts.push({ type: 'email', value: 'nowy@example.pl' });
    }),
  phone: (s) =>
    editFirstProfile(s, 'COMPANY_PHONE_CHANGED', (p) => {
      p.contacts.push({ type: 'phone', value: '+48 600 000 000' });
    }),
  website: (s) =>
    editFirstProfile(s, 'COMPANY_WEBSITE_CHANGED', (p) => {
      p.websites.push('https://nowa.example.pl');
    }),
  bankAccounts: (s) =>
    editFirstProfile(s, 'COMPANY_BANK_ACCOUNTS_CHANGED', (p) => {
      p.bank_accounts.push('999');
    }),
  unitOpened: (s) =>
    editFirstProfile(s, 'COMPANY_UNIT_OPENED', (p) => {
      p.units.push({ identifier: 'U9', name: 'NOWY', address: null, dates: [] });
    }),
  unitClosed: (s) =>
    editFirstProfile(s, 'COMPANY_UNIT_CLOSED', (p) => {
      const open = p.units.find(isOpen);
      if (!open) return false;
      for (const u of p.units) if (u.identifier === open.identifier) u.dates.push({ type: 'closure', date: '2030-01-01' });
    }),
  personAdded: (s) => {
    const next = structuredClone(s);
    next.persons.push({ full_name: 'Zofia Nowa', role: 'PREZES' });
    return { next, expected: 'COMPANY_PERSON_ADDED' };
  },
  personRemoved: (s) => {
    const target = s.persons.find((p) => p.full_name.trim());
    if (!target) return null;
    const next = structuredClone(s);
    next.persons = next.persons.filter((p) => formatPerson(p) !== formatPerson(target));
    return { next, expected: 'COMPANY_PERSON_REMOVED' };
  },
};

// Moves the primary flag to another existing code, so nothing but the main activity changes.
MUTATIONS.mainActivity = (s) =>
  editFirstProfile(s, 'COMPANY_MAIN_ACTIVITY_CHANGED', (p) => {
    const codes = [...new Set(p.activities.map((a) => a.code))].sort();
    const current = codes.find((c) => p.activities.some((a) => a.code === c && a.is_primary)) ?? null;
    const target = codes.find((c) => c !== current);
    if (target === undefined) return false;
    for (const a of p.activities) a.is_primary = a.code === target;
  });

for (const dateType of Object.keys(DATE_EVENT) as DateType[]) {
  MUTATIONS[`date:${dateType}`] = (s) =>
    editFirstProfile(s, DATE_EVENT[dateType]!, (p) => {
      p.dates.push({ type: dateType, date: '2031-01-01' }); // later than any generated date
    });
}

describe('diffSnapshots: properties', () => {
  it('finds nothing between a snapshot and itself', () => {
    fc.assert(
      fc.property(snapshotArb, (s) => diffSnapshots(s, s).length === 0 && diffSnapshots(s, structuredClone(s)).length === 0),
      { numRuns: 500 },
    );
  });

  it('finds nothing when only the order of arrays changes', () => {
    fc.assert(
      fc.property(snapshotArb, fc.nat(), (s, seed) => {
        const events = diffSnapshots(s, reorderEverything(s, seed));
        assert.deepEqual(events, []);
      }),
      { numRuns: 500 },
    );
  });

  for (const [name, mutate] of Object.entries(MUTATIONS)) {
    it(`changing only ${name} yields only its event type`, () => {
      let applied = 0;
      fc.assert(
        fc.property(snapshotArb, (s) => {
          const mutation = mutate(s);
          if (mutation === null) return;
          applied++;
          const types = new Set(diffSnapshots(s, mutation.next).map((e) => e.event_type));
          assert.deepEqual([...types], [mutation.expected]);
        }),
        { numRuns: 200 },
      );
      assert.ok(applied > 20, `the mutation applied to only ${applied} generated snapshots`);
    });
  }

  it('reports a change made identically in every profile once', () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const next = structuredClone(s);
        for (const p of next.profiles) {
          p.name = 'WSPÓLNA NOWA NAZWA';
          p.bank_accounts = ['42'];
        }
        const before = new Set(s.profiles.map((p) => p.name.trim()));
        const events = diffSnapshots(s, next).filter((e) => e.event_type === 'COMPANY_NAME_CHANGED');
        assert.equal(events.length, before.size); // one per distinct old name, not one per profile
        const accounts = diffSnapshots(s, next).filter((e) => e.event_type === 'COMPANY_BANK_ACCOUNTS_CHANGED');
        const distinctOld = new Set(s.profiles.map((p) => joinSorted(p.bank_accounts)).filter((v) => v !== '42'));
        assert.equal(accounts.length, distinctOld.size);
      }),
      { numRuns: 300 },
    );
  });
});
