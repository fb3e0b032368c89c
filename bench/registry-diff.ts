/**
 * The diff alone: `diffSnapshots(prev, next)` on stored-form (canonical) snapshots, one core.
 *
 *   node --import tsx bench/registry-diff.ts --pairs 100000
 *
 * "changed" pairs carry one day's change each (the mix of bench/registry-fixtures.ts);
 * "unchanged" pairs are equal in content but separate objects, as a run sees them.
 */
import { argValue } from './registry-db.ts';
import { benchSnapshot, changedSnapshot } from './registry-fixtures.ts';
import { mergeSnapshots } from '../src/registry/merge.ts';
import { diffSnapshots } from '../src/registry/diff.ts';

const pairs = Number(argValue('pairs', '100000'));
const prev = Array.from({ length: pairs }, (_, n) => mergeSnapshots(null, benchSnapshot(n)));
const changed = prev.map((p, n) => mergeSnapshots(p, changedSnapshot(n, 3)));
const same = prev.map((_, n) => mergeSnapshots(null, benchSnapshot(n)));

function run(label: string, next: typeof prev) {
  let events = 0;
  for (let i = 0; i < Math.min(5000, pairs); i++) events += diffSnapshots(prev[i]!, next[i]!).length; // warm-up
  events = 0;
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) events += diffSnapshots(prev[i]!, next[i]!).length;
  const seconds = (performance.now() - t0) / 1000;
  console.log(JSON.stringify({ label, pairs, events, seconds: Number(seconds.toFixed(3)), per_second: Math.round(pairs / seconds) }));
}
run('changed', changed);
run('unchanged', same);
