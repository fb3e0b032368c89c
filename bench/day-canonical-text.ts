/**
 * What the main thread pays to get each changed company's incoming snapshot as an object on a
 * 1 % day (planner.ts canonicalOf), with the file-preparing worker sending the canonical JSON as
 * bytes only (decoded here, then parsed) or as text too (parsed here): the day file prepared by
 * the worker both ways, alternating, then each item's snapshot parsed on this thread with the
 * worker gone, so the process's CPU is this thread's. Also the whole preparation's CPU (both
 * threads) each way, for what the text costs the worker and the message; then (as a day does)
 * each item parsed as its chunk arrives, both threads' CPU for the whole.
 *
 *   flock /tmp/bench.lock node --import tsx bench/day-canonical-text.ts [--file /var/tmp/regwatch-scale/day-4100000.ndjson] [--rounds 3]
 */
import { loadavg } from 'node:os';
import { canonicalOf } from '../src/registry/daily/planner.ts';
import { isSkip, type PreparedItem } from '../src/registry/prepare.ts';
import { prepareFileInWorker } from '../src/registry/prepare-worker.ts';
import { argValue } from './registry-db.ts';

const FILE = argValue('file', '/var/tmp/regwatch-scale/day-4100000.ndjson');
const ROUNDS = Number(argValue('rounds', '3'));
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function prepared(withText: boolean): Promise<{ items: PreparedItem[]; cpu: number }> {
  const c0 = cpuUs();
  const chunks = prepareFileInWorker(FILE, '2026-01-03', {}, true, withText);
  const items: PreparedItem[] = [];
  for (let c = await chunks.next(); c !== null; c = await chunks.next()) for (const e of c) if (!isSkip(e)) items.push(e);
  return { items, cpu: cpuUs() - c0 };
}

/** Both threads' CPU for the file prepared and each item's snapshot parsed as its chunk arrives (as a day plans its batches). */
async function preparedAndParsed(withText: boolean): Promise<{ n: number; cpu: number; check: number }> {
  const c0 = cpuUs();
  const chunks = prepareFileInWorker(FILE, '2026-01-03', {}, true, withText);
  let n = 0;
  let check = 0;
  for (let c = await chunks.next(); c !== null; c = await chunks.next())
    for (const e of c)
      if (!isSkip(e)) {
        n++;
        check += canonicalOf(e).persons.length;
      }
  return { n, cpu: cpuUs() - c0, check };
}

console.log(JSON.stringify({ file: FILE, loadavg: loadavg().map((x) => Number(x.toFixed(2))) }));
for (let round = 1; round <= ROUNDS; round++) {
  for (const withText of [false, true]) {
    const { n, cpu, check } = await preparedAndParsed(withText);
    console.log(
      JSON.stringify({
        round,
        with_text: withText,
        items: n,
        both_threads_prepare_and_parse_us_an_item: Number((cpu / n).toFixed(2)),
        check,
        loadavg: loadavg()[0]!.toFixed(2),
      }),
    );
  }
}
for (let round = 1; round <= ROUNDS; round++) {
  for (const withText of [false, true]) {
    const { items, cpu } = await prepared(withText);
    const c0 = cpuUs();
    let keys = 0;
    for (const item of items) keys += canonicalOf(item).persons.length;
    const parse = cpuUs() - c0;
    console.log(
      JSON.stringify({
        round,
        with_text: withText,
        items: items.length,
        main_thread_snapshot_us_an_item: Number((parse / items.length).toFixed(2)),
        preparation_cpu_us_an_item: Number((cpu / items.length).toFixed(2)),
        check: keys,
        loadavg: loadavg()[0]!.toFixed(2),
      }),
    );
  }
}
