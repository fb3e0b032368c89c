/**
 * Batch matching at registry scale: the synthetic registry (`--size`, default 1,000,000) indexed
 * in this process as the match module indexes the database (bench/match-eval/registry.ts), then
 * `--batches` batches of 100 queries: names of sampled companies as people type them (legal forms
 * abbreviated, diacritics dropped, words swapped, a typo, a NIP now and then), with a city or postal
 * code half the time, and 10 % names the registry does not hold. Reports the build, the index's
 * memory, and a batch's latency (p50/p99) and queries per second. The database's part of a batch
 * (one primary-key read of the shown candidates) is not included: see docs/benchmarks.md.
 *
 *   node --max-old-space-size=4096 --import tsx bench/match.ts [--size 1000000] [--batches 60]
 */
import { cpus, loadavg } from 'node:os';
import { seededRandom } from '../src/lib/random.ts';
import { matchQuery } from '../src/modules/match/matcher.ts';
import { prepareQuery, type MatchQuery } from '../src/modules/match/scoring.ts';
import { deriveCompanyColumns } from '../src/registry/store/search-columns.ts';
import { createSyntheticSource } from '../src/registry/sources/synthetic.ts';
import { dropDiacritics } from './match-eval/diacritics.ts';
import { buildSyntheticMatchRegistry } from './match-eval/registry.ts';
import { argValue, mb, summary } from './search-fixtures.ts';

const size = Number(argValue('size', '1000000'));
const batches = Number(argValue('batches', '60'));
console.log(
  JSON.stringify({
    started: new Date().toISOString(),
    cpus: cpus().length,
    loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))),
    size,
  }),
);

const rnd = seededRandom(7);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
const sampleEvery = Math.max(1, Math.floor(size / (batches * 100)));
const samples: { name: string; city: string; postal: string; nip: string }[] = [];

const t0 = performance.now();
const registry = await buildSyntheticMatchRegistry({ seed: 42, size, date: '2026-11-20' }, (id, s) => {
  if (id % sampleEvery !== 0) return;
  const c = deriveCompanyColumns(s);
  const a = s.profiles[0]?.address;
  samples.push({ name: c.name, city: a?.city ?? '', postal: a?.postal_code ?? '', nip: s.identity.identifiers[0]!.value });
});
const buildMs = performance.now() - t0;
globalThis.gc?.();
console.log(
  JSON.stringify({
    companies: registry.index.size,
    build_ms: Math.round(buildMs),
    index_mb: mb(registry.index.byteSize),
    rss_mb: mb(process.memoryUsage().rss),
    heap_mb: mb(process.memoryUsage().heapUsed),
  }),
);

const outsiders: string[] = [];
for await (const s of createSyntheticSource({ seed: 99, size: 2000 }).allSnapshots('2026-11-20'))
  outsiders.push(deriveCompanyColumns(s).name);

function corrupt(name: string): string {
  let s = name
    .replace(/SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ/, pick(['sp. z o.o.', 'Sp. z o.o.', 'spółka z o.o.']))
    .replace(/SPÓŁKA CYWILNA/, 's.c.');
  if (rnd() < 0.5) s = dropDiacritics(s);
  if (rnd() < 0.3) s = s.toLowerCase();
  const words = s.split(' ');
  if (rnd() < 0.3 && words.length > 1) [words[0], words[1]] = [words[1]!, words[0]!];
  const long = words.findIndex((w) => w.length >= 7);
  if (rnd() < 0.3 && long >= 0) words[long] = words[long]!.slice(0, 3) + words[long]![4] + words[long]![3] + words[long]!.slice(5);
  return words.join(' ');
}
function query(): MatchQuery {
  if (rnd() < 0.1) return { name: pick(outsiders) };
  const c = pick(samples);
  const q: MatchQuery = { name: corrupt(c.name) };
  if (rnd() < 0.5) q.city = c.city;
  if (rnd() < 0.3) q.postal_code = c.postal;
  if (rnd() < 0.05) q.nip = `PL${c.nip}`;
  return q;
}
const workload = Array.from({ length: batches }, () => Array.from({ length: 100 }, query));

const runBatch = (qs: MatchQuery[]) => {
  let matched = 0;
  for (const q of qs) if (matchQuery(registry.index, prepareQuery(q)).match >= 0) matched++;
  return matched;
};
runBatch(workload[0]!);
const wall: number[] = [];
let matched = 0;
const c0 = process.cpuUsage();
const tAll = performance.now();
for (const qs of workload) {
  const t1 = performance.now();
  matched += runBatch(qs);
  wall.push(performance.now() - t1);
}
const total = performance.now() - tAll;
const cpu = process.cpuUsage(c0);
console.log(
  JSON.stringify({
    batches,
    queries: batches * 100,
    matched_share: Number((matched / (batches * 100)).toFixed(3)),
    batch_ms: summary(wall),
    queries_per_s: Math.round((batches * 100) / (total / 1000)),
    cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    wall_s: Number((total / 1000).toFixed(2)),
  }),
);
console.log(JSON.stringify({ loadavg_1m_5m_15m: loadavg().map((x) => Number(x.toFixed(2))) }));
