import { test } from 'node:test';
import assert from 'node:assert/strict';
import { severityOf } from '../../registry/diff.ts';
import { EVENT_TYPES } from '../../registry/model.ts';
import { sampleEventData } from './service.ts';

/** Test messages carry each type's values in the format real events use (docs/api-contract.md, "Values"). */
test('the sample of each of the 29 types has its values in the format of real events', () => {
  const at = new Date('2026-12-01T10:00:00Z');
  const date = /^\d{4}-\d{2}-\d{2}$/;
  const formats: [RegExp, RegExp][] = [
    [/_DATE$|_DATE_CHANGE$|_STARTED$|_ENDED$/, date],
    [/ACTIVITIES_(ADDED|REMOVED)$|MAIN_ACTIVITY/, /^\d{4}[A-Z](, \d{4}[A-Z])*$/],
    [/ACTIVITIES_CHANGED$/, /^\d{4}[A-Z] \S/],
    [/ADDRESS/, /^.+ \d+(\/\d+)?, \d{2}-\d{3} \S+$/],
    [/TAX_IDENTITY/, /^\d{10}$/],
    [/BANK_ACCOUNTS/, /^\d{26}(, \d{26})*$/],
    [/UNIT_/, /^\d{9,14} \S/],
    [/PERSON_/, /^.+ \(.+\)$/],
  ];
  assert.equal(EVENT_TYPES.length, 29);
  for (const type of EVENT_TYPES) {
    const d = sampleEventData(type, at);
    const values = [d.old_value, d.new_value].filter((v) => v !== null) as string[];
    assert.ok(d.new_value !== null || /REMOVED|CLOSED/.test(type), `${type}: a new value unless something went away`);
    if (/_ADDED$|_OPENED$|_STARTED$|_ENDED$|SUSPENDED_DATE|RESUMPTION_DATE|CLOSED_DATE/.test(type))
      assert.equal(d.old_value, null, `${type}: nothing before`);
    if (/_REMOVED$|_CLOSED$/.test(type)) assert.equal(d.new_value, null, `${type}: nothing after`);
    for (const [types, format] of formats) if (types.test(type)) for (const v of values) assert.match(v, format, `${type}: ${v}`);
    if (date.test(String(d.new_value))) assert.equal(d.new_value, '2026-12-01');
    assert.equal(d.severity, severityOf(type, d.new_value as string | null));
    assert.equal(d.test, true);
    if (type === 'COMPANY_NAME_CHANGED') assert.equal(d.company_name, d.new_value, 'the feed names a company by its current name');
  }
});
