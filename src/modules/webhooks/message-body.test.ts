import { test } from 'node:test';
import assert from 'node:assert/strict';
import { messageBody } from './dispatcher.ts';

const at = new Date('2026-11-21T03:00:12.512Z');
const data = {
  id: 104234,
  event_type: 'COMPANY_NAME_CHANGED',
  old_value: 'ALFA "SP." Z O.O.\n',
  new_value: null,
  event_date: '2026-11-20',
  severity: 'info',
  primary_identifier: '5261040828',
  identifier_type: 'NIP',
  company_name: 'ŻABKA',
};
const expected = JSON.stringify({ type: 'COMPANY_NAME_CHANGED', timestamp: at.toISOString(), data });

test('a compact payload (the fan-out writes to_json) goes into the body as it is', () => {
  assert.equal(messageBody('COMPANY_NAME_CHANGED', at, JSON.stringify(data)), expected);
});

test('a payload in the older spaced form (json_build_object) gives the body it always gave', () => {
  const spaced =
    '{' +
    Object.entries(data)
      .map(([k, v]) => `${JSON.stringify(k)} : ${JSON.stringify(v)}`)
      .join(', ') +
    '}';
  assert.equal(messageBody('COMPANY_NAME_CHANGED', at, spaced), expected);
});
