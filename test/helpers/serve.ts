import { spawn, type ChildProcess } from 'node:child_process';
import { defer } from './cleanup.ts';

/** The regwatch command, as an operator runs it. */
export const BIN = new URL('../../bin/regwatch.js', import.meta.url).pathname;

export interface ServeProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * The environment of a `regwatch serve` process on the test database `databaseUrl`: the parent's,
 * no registry sources, no demo data, no Redis, info logs; `extra` on top.
 */
export function serveEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REGISTRY_SOURCES: '',
    DEMO_COMPANIES: '0',
    LOG_LEVEL: 'info',
    ...extra,
  };
  delete env.REDIS_URL;
  return env;
}

/**
 * `regwatch serve` in a process of its own with exactly `env` (pass the parent's environment in
 * when it should be kept), stopped when the test file ends: with SIGTERM (SIGKILL after 15 s), or
 * at once with SIGKILL (`stop: 'kill'`).
 */
export function serveProcess(env: Record<string, string | undefined>, options: { stop?: 'term' | 'kill' } = {}): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  defer(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (options.stop === 'kill') {
      child.kill('SIGKILL');
      return;
    }
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  });
  return { child, output: () => out, exited };
}
