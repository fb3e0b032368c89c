import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainRun, firstTouchFigures, type MachineSample, damonPagedOutBytes, pageCacheDelta } from '../bench/machine.ts';

/** What the registry benchmarks print about the machine (bench/machine.ts, docs/benchmarks.md). */

test('first-touch probe: the fastest buffer is the warm price, the last is cold only when three times slower', () => {
  assert.deepEqual(
    firstTouchFigures([
      [2.4, 2.2],
      [2.1, 2.0],
      [2.6, 2.5],
      [17.63, 17.42],
    ]),
    { first_touch_us_per_4k: 17.63, first_touch_cpu_us_per_4k: 17.42, warm_touch_us_per_4k: 2.1, warm_pool_mb: 768 },
  );
  // Never reached cold memory: no cold price, and the warm memory is at least what was touched.
  assert.deepEqual(
    firstTouchFigures([
      [2.4, 2.2],
      [5.9, 5.0],
    ]),
    { first_touch_us_per_4k: null, first_touch_cpu_us_per_4k: null, warm_touch_us_per_4k: 2.4, warm_pool_mb: 512 },
  );
  // Cold from the first byte (no warm memory at all): nothing to tell it from, reported as warm.
  assert.equal(firstTouchFigures([[18, 17]]).first_touch_us_per_4k, null);
});

test('explainRun: page faults a company, memory handed back to the host, and the cold memory taken', () => {
  const sample = (at: number, faults: number, reportedKib: number, freeKb: number): MachineSample => ({
    at,
    ticks: null,
    sectors: 0,
    cluster: null,
    dirtyKb: 0,
    writebackKb: 0,
    machineFaults: faults,
    reportedKib,
    freeKb,
  });
  const out = explainRun(sample(0, 1_000, 10 * 2 ** 20, 8 * 2 ** 20), sample(1000, 301_000, 11 * 2 ** 20, 5 * 2 ** 20), 100_000, null);
  assert.equal(out.machine_page_faults_per_company, 3);
  assert.equal(out.memory_reported_to_host_mb, 1024);
  // Free memory fell by 3 GB, and 1 GB was handed back meanwhile: 4 GB of cold memory taken.
  assert.equal(out.cold_memory_taken_mb_estimate, 4096);
  // A guest without free page reporting: nothing to say.
  const none = explainRun({ ...sample(0, 0, 0, 0), reportedKib: null }, { ...sample(1, 0, 0, 0), reportedKib: null }, 1, null);
  assert.equal(none.memory_reported_to_host_mb, null);
  assert.equal(none.cold_memory_taken_mb_estimate, null);
});

test('pageCacheDelta: MB paged out by DAMON and MB of evicted file pages read back; null where unknown', () => {
  const out = pageCacheDelta(
    { damonPagedOutBytes: 2 ** 30, fileRefaults: 1_000 },
    { damonPagedOutBytes: 3 * 2 ** 30, fileRefaults: 1_000 + 2 * 256 },
  );
  assert.deepEqual(out, { damon_paged_out_mb: 2048, file_refaults_mb: 2 });
  const none = pageCacheDelta({ damonPagedOutBytes: null, fileRefaults: null }, { damonPagedOutBytes: 5, fileRefaults: 7 });
  assert.deepEqual(none, { damon_paged_out_mb: null, file_refaults_mb: null });
  // On a machine with a kdamond (read as root) the reading is a number that never falls.
  const a = damonPagedOutBytes();
  const b = damonPagedOutBytes();
  if (a !== null) assert.ok(b !== null && b >= a);
});
