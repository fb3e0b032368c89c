import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ValidationError } from '../../lib/errors.ts';
import { nipCheckDigit } from '../../lib/identifiers.ts';
import { parseIdentifierList } from './identifier-list.ts';

function errorsOf(body: unknown): Record<string, string[]> {
  try {
    parseIdentifierList(body);
  } catch (e) {
    assert.ok(e instanceof ValidationError);
    return e.errors;
  }
  assert.fail('expected a ValidationError');
}

test('stored forms, duplicates collapsed in first-seen order, submitted counts every value', () => {
  assert.deepEqual(parseIdentifierList({ identifier_type: 'NIP', identifier_value: ['PL 526-104-08-28', '5261040828', '7740001454'] }), {
    type: 'NIP',
    values: ['5261040828', '7740001454'],
    submitted: 3,
  });
  assert.deepEqual(parseIdentifierList({ identifier_type: 'KRS', identifier_value: ['28860', '0000028860'] }), {
    type: 'KRS',
    values: ['0000028860'],
    submitted: 2,
  });
  assert.deepEqual(parseIdentifierList({ name: 'regon9', value: ['610188201'] }), { type: 'REGON9', values: ['610188201'], submitted: 1 });
});

test('every problem at once, keyed by field and index', () => {
  const table: [unknown, Record<string, string[]>][] = [
    [null, { body: ['The request body must be a JSON object.'] }],
    ['NIP', { body: ['The request body must be a JSON object.'] }],
    [{}, { identifier_type: ['The identifier type field is required.'], identifier_value: ['The identifier value field is required.'] }],
    [{ identifier_type: 'NIP', identifier_value: 'x' }, { identifier_value: ['The identifier value field must be an array.'] }],
    [{ identifier_type: 'NIP', identifier_value: [] }, { identifier_value: ['The identifier value field must have at least 1 item.'] }],
    [
      { identifier_type: 'VAT', identifier_value: ['5261040828'] },
      { identifier_type: ['The selected identifier type is invalid. Use one of NIP, REGON9, KRS.'] },
    ],
    [
      { identifier_type: 'NIP', identifier_value: ['5261040828', '5261040829', null] },
      {
        'identifier_value.1': ['The NIP must be 10 digits with a valid checksum.'],
        'identifier_value.2': ['The identifier value item 2 must be a string.'],
      },
    ],
    [
      { name: 'KRS', value: ['0', '1'.repeat(51)] },
      {
        'value.0': ['The KRS must be 1 to 10 digits and not all zeros.'],
        'value.1': ['The value item 1 must not be greater than 50 characters.'],
      },
    ],
    [
      { name: 'NIP', identifier_type: 'KRS', identifier_value: ['1904067296'] },
      { name: ['The name field is an alias of identifier_type; give one of them, or both the same.'] },
    ],
    [
      { identifier_type: 'NIP', identifier_value: ['5261040828'], value: ['7740001454'] },
      { value: ['The value field is an alias of identifier_value; give one of them, or both the same.'] },
    ],
  ];
  for (const [body, errors] of table) assert.deepEqual(errorsOf(body), errors, JSON.stringify(body));
  // Both, the same: as one.
  assert.deepEqual(parseIdentifierList({ name: 'NIP', identifier_type: 'NIP', identifier_value: ['5261040828'], value: ['5261040828'] }), {
    type: 'NIP',
    values: ['5261040828'],
    submitted: 1,
  });
  assert.deepEqual(Object.keys(errorsOf({ identifier_type: 'NIP', identifier_value: Array(101).fill('5261040828') })), [
    'identifier_value',
  ]);
});

test('property: any mix of valid and invalid NIPs reports exactly the invalid indexes, or parses to the distinct valid ones', () => {
  const validNip = fc
    .integer({ min: 100_000_000, max: 999_999_999 })
    .map(String)
    .filter((s) => nipCheckDigit(s) !== null)
    .map((s) => s + String(nipCheckDigit(s)));
  const entry = fc.oneof(
    validNip.map((v) => ({ raw: v, ok: true, stored: v })),
    validNip.map((v) => ({ raw: `PL ${v.slice(0, 3)}-${v.slice(3)}`, ok: true, stored: v })),
    fc
      .string({ maxLength: 12 })
      .filter((s) => !/^\d{10}$/.test(s.replace(/\D/g, '')))
      .map((v) => ({ raw: v, ok: false, stored: '' })),
  );
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 100 }), (entries) => {
      const body = { identifier_type: 'NIP', identifier_value: entries.map((e) => e.raw) };
      const bad = entries.map((e, i) => (e.ok ? -1 : i)).filter((i) => i >= 0);
      if (bad.length > 0) {
        assert.deepEqual(
          Object.keys(errorsOf(body)),
          bad.map((i) => `identifier_value.${i}`),
        );
      } else {
        const parsed = parseIdentifierList(body);
        assert.deepEqual(parsed.values, [...new Set(entries.map((e) => e.stored))]);
        assert.equal(parsed.submitted, entries.length);
      }
    }),
  );
});
