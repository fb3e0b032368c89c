import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatDay, parseDay } from './days.ts';

describe('parseDay and formatDay', () => {
  test('every valid date, the years 1 to 99 included, is a day and back', () => {
    for (const date of ['0001-01-01', '0050-06-01', '0099-12-31', '0100-03-01', '1970-01-01', '2024-02-29', '9999-12-31'])
      assert.equal(formatDay(parseDay(date)), date);
    assert.equal(parseDay('1970-01-02'), 1);
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }), (d) => {
        const date = d.toISOString().slice(0, 10);
        assert.equal(formatDay(parseDay(date)), date);
      }),
    );
  });

  test('a date that is not real is refused', () => {
    for (const date of ['2023-02-29', '0001-13-01', '0050-00-10', '2026-1-01']) assert.throws(() => parseDay(date), RangeError);
  });
});
