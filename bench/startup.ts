/**
 * Time from `regwatch serve` to the first 200 of /health on a fresh embedded database (initdb,
 * migrations, listen), as a newcomer's first `npm start` sees it, and on a second start.
 *   node --import tsx bench/startup.ts [--runs 3]
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const BIN = new URL('../bin/regwatch.js', import.meta.url).pathname;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

async function timeToHealth(dataDir: string): Promise<number> {
  const port = await freePort();
  const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const t0 = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: 'ignore' });
  try {
    for (;;) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/health`);
        if (r.status === 200) return performance.now() - t0;
      } catch {
        /* not yet */
      }
      if (performance.now() - t0 > 120_000) throw new Error('no /health within 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
  }
}

const runs = Number(values.runs);
const first: number[] = [];
const second: number[] = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), 'regwatch-startup-'));
  chmodSync(dir, 0o755);
  try {
    first.push(await timeToHealth(join(dir, 'data')));
    second.push(await timeToHealth(join(dir, 'data')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const fmt = (xs: number[]) => xs.map((x) => `${(x / 1000).toFixed(2)} s`).join(', ');
console.log(`first start (fresh DATA_DIR) to /health: ${fmt(first)}`);
console.log(`second start (existing cluster) to /health: ${fmt(second)}`);
