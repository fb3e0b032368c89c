/**
 * `npm run bench -- NAME [args]` runs bench/NAME.ts; with no name it lists them. Each benchmark
 * prints its figures and the command that reproduces them (see docs/benchmarks.md).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = new URL('.', import.meta.url).pathname;
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('-fixtures.ts') && !f.endsWith('-db.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  console.log(
    `Usage: npm run bench -- NAME [args]\n\nBenchmarks:\n${names.map((n) => `  ${n}`).join('\n')}\n\nResults and exact commands: docs/benchmarks.md`,
  );
  process.exit(name ? 2 : 0);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${name}.ts`, ...args], { stdio: 'inherit' });
process.exit(r.status ?? 1);
