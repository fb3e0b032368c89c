import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { CompanySnapshot } from '../../model.ts';
import { createSyntheticSource } from '../synthetic.ts';

/**
 * Pins what the synthetic source generates for a fixed seed: tests and benchmarks (bench/, and
 * the figures in docs/benchmarks.md) depend on the data being the same from one version to the
 * next, so a refactoring of the generator must leave these hashes as they are. A deliberate
 * change of the generated data updates them (and says so in its commit).
 */

async function hashOf(snapshots: AsyncIterable<CompanySnapshot>, limit = Infinity): Promise<{ count: number; sha256: string }> {
  const hash = createHash('sha256');
  let count = 0;
  for await (const s of snapshots) {
    hash.update(JSON.stringify(s));
    hash.update('\n');
    if (++count >= limit) break;
  }
  return { count, sha256: hash.digest('hex') };
}

const source = createSyntheticSource({ seed: 20261121, size: 3_000, epoch: '2026-01-01' });

test('the first companies of a fixed seed are the same as ever', async () => {
  assert.deepEqual(await hashOf(source.allSnapshots('2026-01-01'), 2_000), {
    count: 2_000,
    sha256: '95e7ab04a7de2b0740cf67d476ffac64335ee866cd137905daca8e2723dce493',
  });
});

/** Every day of March: a day alone changes too few companies to reach every kind of change. */
async function* changesOfMarch(): AsyncGenerator<CompanySnapshot> {
  for (let d = 1; d <= 31; d++) yield* source.snapshotsForDate(`2026-03-${String(d).padStart(2, '0')}`);
}

test('the days of changes of a fixed seed are the same as ever', async () => {
  assert.deepEqual(await hashOf(source.snapshotsForDate('2026-03-15')), {
    count: 25,
    sha256: '3cc6dffffa334c1aba776559c96704f799d578d982bb6802ef39ac2050141cff',
  });
  assert.deepEqual(await hashOf(changesOfMarch()), {
    count: 471,
    sha256: 'dccacccd580696395bdfca961c06071d66dd3fd1245ecd5724936db11bf7fa63',
  });
});

test('a later state with registered companies is the same as ever', async () => {
  assert.deepEqual(await hashOf(source.allSnapshots('2026-09-30', { includeRegistered: true })), {
    count: 3_242,
    sha256: '414ad96c50896e51446fe5d5389da7c6db6ac2365f390cecf49ccc845cd9b128',
  });
});
