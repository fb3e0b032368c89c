import { test } from 'node:test';
import assert from 'node:assert/strict';
import { catchUpDays, daysBetween, lastDueDay, sourceCoverage, sourceNameOf } from './source-days.ts';

const days = (...d: string[]) => new Set(d);

test('a day is due 30 hours after it began: 06:00 UTC the next day', () => {
  assert.equal(lastDueDay(new Date('2026-11-25T05:59:59Z')), '2026-11-23');
  assert.equal(lastDueDay(new Date('2026-11-25T06:00:00Z')), '2026-11-24');
  assert.equal(lastDueDay(new Date('2026-11-25T23:59:59Z')), '2026-11-24');
  assert.deepEqual(daysBetween('2026-02-27', '2026-03-01'), ['2026-02-27', '2026-02-28', '2026-03-01']);
  assert.deepEqual(daysBetween('2026-03-02', '2026-03-01'), []);
});

test('source names of specs', () => {
  assert.equal(sourceNameOf('krs'), 'krs');
  assert.equal(sourceNameOf('synthetic:7'), 'synthetic');
  assert.equal(sourceNameOf('file:/tmp/a:b.ndjson'), 'file');
});

test('coverage: health and gaps', async (t) => {
  const now = new Date('2026-11-25T12:00:00Z'); // last due day: 2026-11-24
  const base = { configured: true, now, lastRunStatus: 'completed' as const, latestRunDate: null };
  const cases: Array<[string, Parameters<typeof sourceCoverage>[0], { health: string; gaps: string[] }]> = [
    [
      'unconfigured: no gaps whatever ran',
      { ...base, configured: false, trackedFrom: '2026-11-01', completedDays: days() },
      { health: 'unconfigured', gaps: [] },
    ],
    [
      'configured, never scheduled nor run: nothing owed yet',
      { ...base, trackedFrom: null, completedDays: days(), lastRunStatus: null },
      { health: 'ok', gaps: [] },
    ],
    ['watched from today: nothing due yet', { ...base, trackedFrom: '2026-11-25', completedDays: days() }, { health: 'ok', gaps: [] }],
    [
      'every day since it is watched completed',
      { ...base, trackedFrom: '2026-11-22', completedDays: days('2026-11-22', '2026-11-23', '2026-11-24') },
      { health: 'ok', gaps: [] },
    ],
    [
      'a missed day this week',
      { ...base, trackedFrom: '2026-11-22', completedDays: days('2026-11-22', '2026-11-24') },
      { health: 'degraded', gaps: ['2026-11-23'] },
    ],
    [
      'last run failed, nothing missing',
      { ...base, lastRunStatus: 'failed', trackedFrom: '2026-11-23', completedDays: days('2026-11-23', '2026-11-24') },
      { health: 'degraded', gaps: [] },
    ],
    [
      'a gap older than 7 days: listed, but ok',
      { ...base, trackedFrom: '2026-11-16', completedDays: days(...daysBetween('2026-11-18', '2026-11-24')) },
      { health: 'ok', gaps: ['2026-11-16', '2026-11-17'] },
    ],
    [
      'the 3 last due days missing: down',
      { ...base, trackedFrom: '2026-11-20', completedDays: days('2026-11-20', '2026-11-21') },
      { health: 'down', gaps: ['2026-11-22', '2026-11-23', '2026-11-24'] },
    ],
    [
      'a failed run of today: missing at once',
      { ...base, lastRunStatus: 'failed', latestRunDate: '2026-11-25', trackedFrom: '2026-11-25', completedDays: days() },
      { health: 'degraded', gaps: ['2026-11-25'] },
    ],
    [
      "today's run still under way: not a gap before it is due (not degraded all night)",
      {
        ...base,
        lastRunStatus: 'running',
        latestRunDate: '2026-11-25',
        runningDate: '2026-11-25',
        trackedFrom: '2026-11-23',
        completedDays: days('2026-11-23', '2026-11-24'),
      },
      { health: 'ok', gaps: [] },
    ],
    [
      'a run under way of a day already due: that day is still missing',
      {
        ...base,
        lastRunStatus: 'running',
        latestRunDate: '2026-11-24',
        runningDate: '2026-11-24',
        trackedFrom: '2026-11-23',
        completedDays: days('2026-11-23'),
      },
      { health: 'degraded', gaps: ['2026-11-24'] },
    ],
    [
      'a run of a later day ends the window there',
      { ...base, latestRunDate: '2026-11-25', trackedFrom: '2026-11-23', completedDays: days('2026-11-23', '2026-11-25') },
      { health: 'degraded', gaps: ['2026-11-24'] },
    ],
    [
      'a run dated in the future ends it today',
      { ...base, lastRunStatus: 'failed', latestRunDate: '2027-01-01', trackedFrom: '2026-11-23', completedDays: days() },
      { health: 'down', gaps: ['2026-11-23', '2026-11-24', '2026-11-25'] },
    ],
    [
      '2 days watched, both missing: degraded, not down',
      { ...base, trackedFrom: '2026-11-23', completedDays: days() },
      { health: 'degraded', gaps: ['2026-11-23', '2026-11-24'] },
    ],
  ];
  for (const [name, input, expected] of cases) {
    await t.test(name, () => assert.deepEqual(sourceCoverage(input), expected));
  }
  const old = sourceCoverage({ ...base, trackedFrom: '2026-01-01', completedDays: days() });
  assert.equal(old.gaps.length, 30, 'the window is 30 days');
  assert.equal(old.gaps[0], '2026-10-26');
  assert.equal(old.health, 'down');
});

test("catch-up: missed days oldest first, within the source's reach and the window, then the day itself", async (t) => {
  const base = { target: '2026-11-24', today: '2026-11-25', catchUpDays: 30 };
  const cases: Array<[string, Parameters<typeof catchUpDays>[0], string[]]> = [
    ['first tick: only its day', { ...base, trackedFrom: '2026-11-24', completedDays: days(), maxBackfillDays: null }, ['2026-11-24']],
    [
      'nothing missed',
      {
        ...base,
        trackedFrom: '2026-11-20',
        completedDays: days('2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23'),
        maxBackfillDays: null,
      },
      ['2026-11-24'],
    ],
    [
      'a failed and a never-run day',
      { ...base, trackedFrom: '2026-11-20', completedDays: days('2026-11-20', '2026-11-22'), maxBackfillDays: null },
      ['2026-11-21', '2026-11-23', '2026-11-24'],
    ],
    ['its day already completed', { ...base, trackedFrom: '2026-11-24', completedDays: days('2026-11-24'), maxBackfillDays: null }, []],
    [
      'BIR: 7 days back from today at most',
      { ...base, trackedFrom: '2026-11-01', completedDays: days(), maxBackfillDays: 7 },
      daysBetween('2026-11-18', '2026-11-24'),
    ],
    ['VAT: only yesterday', { ...base, trackedFrom: '2026-11-01', completedDays: days(), maxBackfillDays: 1 }, ['2026-11-24']],
    [
      'the catch-up window bounds any-day sources',
      { ...base, catchUpDays: 3, trackedFrom: '2026-11-01', completedDays: days(), maxBackfillDays: null },
      daysBetween('2026-11-21', '2026-11-24'),
    ],
    [
      'catch-up turned off',
      { ...base, catchUpDays: 0, trackedFrom: '2026-11-01', completedDays: days(), maxBackfillDays: null },
      ['2026-11-24'],
    ],
    ['not watched before its first tick', { ...base, trackedFrom: null, completedDays: days(), maxBackfillDays: null }, ['2026-11-24']],
  ];
  for (const [name, input, expected] of cases) {
    await t.test(name, () => assert.deepEqual(catchUpDays(input), expected));
  }
});
