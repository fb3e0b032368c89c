import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationError } from '../../lib/errors.ts';
import { EVENT_SCOPES, EVENT_TYPES } from '../../registry/model.ts';
import { parseEventFilters } from './event-filters.ts';

test('no filter: every type, no dates', () => {
  assert.deepEqual(parseEventFilters({}), { types: null, fromDate: null, toDate: null });
  assert.deepEqual(parseEventFilters({ event_type: ' ', scope: '' }), { types: null, fromDate: null, toDate: null });
});

test('event_type: one or a comma list, case-insensitive, in the model order; scope: a group; both: the intersection', () => {
  const table: [Parameters<typeof parseEventFilters>[0], string[]][] = [
    [{ event_type: 'COMPANY_NAME_CHANGED' }, ['COMPANY_NAME_CHANGED']],
    [{ event_type: 'company_phone_changed, COMPANY_NAME_CHANGED,' }, ['COMPANY_NAME_CHANGED', 'COMPANY_PHONE_CHANGED']],
    [{ scope: 'insolvency' }, [...EVENT_SCOPES.insolvency]],
    [
      { scope: 'Tax,persons' },
      [...EVENT_SCOPES.persons, ...EVENT_SCOPES.tax].sort((a, b) => EVENT_TYPES.indexOf(a) - EVENT_TYPES.indexOf(b)),
    ],
    [{ scope: 'identity', event_type: 'COMPANY_NAME_CHANGED,COMPANY_PHONE_CHANGED' }, ['COMPANY_NAME_CHANGED']],
    [{ scope: 'identity', event_type: 'COMPANY_PHONE_CHANGED' }, []],
  ];
  for (const [q, types] of table) assert.deepEqual(parseEventFilters(q).types, types, JSON.stringify(q));
});

test('every scope names event types of the model, every type is in a scope, only the NIP in two', () => {
  const all = Object.values(EVENT_SCOPES).flat();
  assert.deepEqual([...new Set(all)].sort(), [...EVENT_TYPES].sort());
  const twice = all.filter((t, i) => all.indexOf(t) !== i);
  assert.deepEqual(twice, ['COMPANY_TAX_IDENTITY_CHANGED']);
});

test("the specification's groups are whole in their scopes", () => {
  const groups: [keyof typeof EVENT_SCOPES, string[]][] = [
    ['identity', ['COMPANY_NAME_CHANGED', 'COMPANY_LEGAL_FORM_CHANGED', 'COMPANY_TAX_IDENTITY_CHANGED']],
    ['address', ['COMPANY_REGISTERED_ADDRESS_ADDED', 'COMPANY_REGISTERED_ADDRESS_CHANGED']],
    [
      'activities',
      ['COMPANY_ACTIVITIES_ADDED', 'COMPANY_ACTIVITIES_REMOVED', 'COMPANY_ACTIVITIES_CHANGED', 'COMPANY_MAIN_ACTIVITY_CHANGED'],
    ],
    ['status', ['COMPANY_SUSPENDED_DATE', 'COMPANY_RESUMPTION_DATE', 'COMPANY_CLOSED_DATE', 'COMPANY_START_DATE_CHANGE']],
    ['insolvency', ['COMPANY_BANKRUPTCY_STARTED', 'COMPANY_BANKRUPTCY_ENDED']],
    [
      'contact',
      ['COMPANY_EMAIL_CHANGED', 'COMPANY_PHONE_CHANGED', 'COMPANY_WEBSITE_CHANGED', 'COMPANY_UNIT_OPENED', 'COMPANY_UNIT_CLOSED'],
    ],
  ];
  for (const [scope, types] of groups)
    for (const t of types) assert.ok((EVENT_SCOPES[scope] as readonly string[]).includes(t), `${scope}: ${t}`);
});

test('dates are inclusive calendar dates; to before from, an unknown type or scope: 422 naming each', () => {
  assert.deepEqual(parseEventFilters({ from_date: '2026-11-01', to_date: '2026-11-01' }), {
    types: null,
    fromDate: '2026-11-01',
    toDate: '2026-11-01',
  });
  try {
    parseEventFilters({ event_type: 'NOPE', scope: 'weather', from_date: '2026-02-30', to_date: '2026-1-1' });
    assert.fail('expected a ValidationError');
  } catch (e) {
    assert.ok(e instanceof ValidationError);
    assert.deepEqual(Object.keys(e.errors), ['event_type', 'scope', 'from_date', 'to_date']);
  }
  assert.throws(
    () => parseEventFilters({ from_date: '2026-11-02', to_date: '2026-11-01' }),
    (e: unknown) => e instanceof ValidationError && 'to_date' in e.errors,
  );
});
