/**
 * Synthetic registry generation speed (companies a second, one core), for `regwatch seed` and
 * the demo data. node --import tsx bench/synthetic.ts [--size 200000] [--date 2026-11-20]
 */
import { parseArgs } from 'node:util';
import { createSyntheticSource } from '../src/registry/sources/synthetic.ts';

const { values } = parseArgs({ options: { size: { type: 'string', default: '200000' }, date: { type: 'string', default: '2026-11-20' } } });
const size = Number(values.size);
const source = createSyntheticSource({ seed: 1, size });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let n = 0;
for await (const _ of source.allSnapshots(values.date!)) n++;
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuS = (cpu.user + cpu.system) / 1e6;
console.log(
  `synthetic allSnapshots(${values.date}) size ${size}: ${n} companies in ${wall.toFixed(2)} s wall = ${Math.round(n / wall)}/s; ${Math.round(n / cpuS)}/s per CPU-second`,
);
