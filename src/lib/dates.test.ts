import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addDays, isIsoDate } from './dates.ts';

test('isIsoDate: real calendar dates from 0001-01-01, in the form YYYY-MM-DD only', () => {
  for (const ok of ['0001-01-01', '0099-12-31', '1900-01-01', '2024-02-29', '2026-12-31', '9999-12-31']) assert.ok(isIsoDate(ok), ok);
  for (const bad of [
    '0000-01-01',
    '2026-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-1-1',
    '20261201',
    ' 2026-12-01',
    '2026-12-01x',
    '',
  ])
    assert.ok(!isIsoDate(bad), bad);
});

test('addDays moves across months, years and leap days in UTC', () => {
  assert.equal(addDays('2024-02-28', 1), '2024-02-29');
  assert.equal(addDays('2026-12-31', 1), '2027-01-01');
  assert.equal(addDays('2026-03-01', -1), '2026-02-28');
});
