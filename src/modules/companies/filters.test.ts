import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../../lib/errors.ts';
import { filtersKey, isStoredPostalCode, nameWordsOf, parseSearchQuery, type SearchQuery } from './filters.ts';

const errorsOf = (q: SearchQuery) => {
  try {
    parseSearchQuery(q);
  } catch (e) {
    assert.ok(e instanceof ValidationError);
    return e.errors;
  }
  assert.fail(`expected a 422 for ${JSON.stringify(q)}`);
};

describe('parseSearchQuery', () => {
  test('defaults: ACTIVE, page 1, no other condition', () => {
    assert.deepEqual(parseSearchQuery({}), {
      page: 1,
      filters: {
        status: 'ACTIVE',
        hasContact: null,
        activityCodes: [],
        activityPrefix: null,
        activityStartFrom: null,
        activityStartTo: null,
        voivodeship: null,
        city: null,
        postalCode: null,
        legalForm: null,
        nameWords: [],
      },
    });
  });

  test('equivalent spellings normalise to one filter set (one filtersKey)', () => {
    const pairs: [SearchQuery, SearchQuery][] = [
      [{ activity_code: '62.01.Z' }, { activity_code: '6201z' }],
      [{ activities: '6201Z, 4941Z' }, { activity_code: '4941Z', activities: '62.01.Z' }],
      [{ activity_prefix: '62.0' }, { activity_prefix: '620' }],
      [{ postal_code: '00-950' }, { postal_code: '00950' }],
      [{ postal_code: 'sw1a 1aa' }, { postal_code: 'SW1A-1AA' }],
      [{ city: 'Łódź' }, { city: '  LODZ ' }],
      [{ voivodeship: 'Łódzkie' }, { voivodeship: '10' }],
      [{ voivodeship: 'województwo łódzkie' }, { voivodeship: 'lodzkie' }],
      [{ status: 'deleted' }, { status: 'DELETED' }],
      [{ has_contact: 'EMAIL' }, { has_contact: 'email' }],
      [{ legal_form: 'SP-Z-OO' }, { legal_form: 'sp-z-oo' }],
      [{ open_from: '2020-01-01' }, { activity_start_from: '2020-01-01' }],
      [{ open_from: '2019-01-01', activity_start_from: '2020-01-01' }, { activity_start_from: '2020-01-01' }],
      [{ q: 'Orlen Spółka Akcyjna' }, { q: 'orlen' }],
      [{ q: 'trans alfa alfa' }, { q: 'ALFA, TRANS' }],
      [{ city: '', q: '   ' }, {}],
    ];
    for (const [a, b] of pairs)
      assert.equal(filtersKey(parseSearchQuery(a).filters), filtersKey(parseSearchQuery(b).filters), JSON.stringify([a, b]));
    assert.notEqual(
      filtersKey(parseSearchQuery({ city: 'lodz' }).filters),
      filtersKey(parseSearchQuery({ city: 'lodz', status: 'DELETED' }).filters),
    );
  });

  test('each invalid value is a 422 on its own field', () => {
    const cases: [SearchQuery, string][] = [
      [{ status: 'ALL' }, 'status'],
      [{ has_contact: 'sms' }, 'has_contact'],
      [{ activity_code: 'abc' }, 'activity_code'],
      [{ activity_code: '62%' }, 'activity_code'],
      [{ activities: '6201Z,_' }, 'activities'],
      [{ activities: Array.from({ length: 21 }, (_, i) => `${1000 + i}Z`).join(',') }, 'activities'],
      [{ activity_code: Array.from({ length: 21 }, (_, i) => `${1000 + i}Z`).join(',') }, 'activity_code'],
      [{ activity_code: '1000Z', activities: Array.from({ length: 20 }, (_, i) => `${1001 + i}Z`).join(',') }, 'activities'],
      [{ activity_prefix: '6_' }, 'activity_prefix'],
      [{ activity_start_from: '2021-02-29' }, 'activity_start_from'],
      [{ open_from: '01.01.2020' }, 'open_from'],
      [{ activity_start_to: '2020-1-1' }, 'activity_start_to'],
      [{ activity_start_from: '2021-01-02', activity_start_to: '2021-01-01' }, 'activity_start_to'],
      [{ voivodeship: 'bawaria' }, 'voivodeship'],
      [{ legal_form: "'; DROP TABLE companies; --" }, 'legal_form'],
      [{ q: 'a b c d e f g h i' }, 'q'],
      [{ city: 'lodz\u0000' }, 'city'],
      [{ q: 'orlen\u0007' }, 'q'],
      [{ voivodeship: '\u001bmazowieckie' }, 'voivodeship'],
    ];
    for (const [q, field] of cases) assert.deepEqual(Object.keys(errorsOf(q)), [field], JSON.stringify(q));
  });

  test('postal_code: any text (the schema bounds it to 20 characters) is a filter, not a 422', () => {
    for (const code of ['0095', '00-95%', 'SW1A 1AA', '75008', 'CEDEX 16', "'; --", '1e3', '😀']) {
      assert.ok(parseSearchQuery({ postal_code: code }).filters.postalCode, code);
    }
    assert.equal(parseSearchQuery({ postal_code: ' 00 - 950 ' }).filters.postalCode, '00950');
    assert.ok(isStoredPostalCode('00950'));
    for (const code of ['0095', '009500', 'SW1A1AA', '1E3', '']) assert.equal(isStoredPostalCode(code), false, code);
  });

  test('nameWordsOf: folded, legal-form words dropped, split at anything but a-z0-9, distinct and sorted', () => {
    assert.deepEqual(nameWordsOf('ORLEN SPÓŁKA AKCYJNA'), ['orlen']);
    assert.deepEqual(nameWordsOf('Beta IT sp. z o.o.'), ['beta', 'it']);
    assert.deepEqual(nameWordsOf('Zakład Usług Łódź-Bałuty'), ['baluty', 'lodz', 'uslug', 'zaklad']);
    assert.deepEqual(nameWordsOf("o'hara % _ \\"), ['hara', 'o']);
    assert.deepEqual(nameWordsOf('S.A.'), []);
  });
});
