import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import pg from 'pg';
import { freePort } from './helpers/net.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defer } from './helpers/cleanup.ts';
import { BIN, serveProcess, type ServeProcess } from './helpers/serve.ts';
import { sharedBuffersMb } from '../src/db/embedded.ts';

function serve(dataDir: string, port: number, extraEnv: Record<string, string> = {}): ServeProcess {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    DEMO_COMPANIES: '0',
    LOG_LEVEL: 'info',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  return serveProcess(env, { stop: 'kill' });
}

/** Runs a command to its end: exit code, stdout, stderr, and both as they came. */
async function run(
  command: string,
  args: string[],
  env?: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string; output: string }> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const r = { code: null as number | null, stdout: '', stderr: '', output: '' };
  child.stdout.on('data', (d) => {
    r.stdout += d;
    r.output += d;
  });
  child.stderr.on('data', (d) => {
    r.stderr += d;
    r.output += d;
  });
  r.code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return r;
}

/** A DATA_DIR of its own, reachable by the postgres user (as root), removed after the test. */
function tempDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function waitForHealth(port: number, ms: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/health`);
      if (r.status === 200 && (await r.json()).status === 'ok') return Date.now() - start;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no /health within ${ms} ms`);
}

test(
  'regwatch serve on the embedded PostgreSQL: /health, graceful SIGTERM, a stale postmaster.pid after a crash',
  { timeout: 300_000 },
  async () => {
    const dataDir = tempDataDir('regwatch-serve-');
    const port = await freePort();

    // First start: initialises the cluster, then /health answers (its time is measured by
    // bench/startup.ts, not asserted here: a loaded CI machine must not make this test flaky).
    const first = serve(dataDir, port);
    await waitForHealth(port, 90_000);
    const reg = await fetch(`http://127.0.0.1:${port}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'proc@example.com', name: 'Proc' }),
    });
    assert.equal(reg.status, 201);
    // Its buffer cache is sized for the machine (postmaster.opts is the server's command line).
    assert.match(readFileSync(join(dataDir, 'pg', 'postmaster.opts'), 'utf8'), new RegExp(`shared_buffers=${sharedBuffersMb()}MB`));
    // Its settings as the server reports them: initialised without data checksums, WAL writer at 10 ms.
    const creds = JSON.parse(readFileSync(join(dataDir, 'pg-credentials.json'), 'utf8')) as { user: string; password: string };
    const pgPort = Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
    const client = new pg.Client({ host: '127.0.0.1', port: pgPort, user: creds.user, password: creds.password, database: 'regwatch' });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; setting: string }>(
        `SELECT name, setting FROM pg_settings WHERE name IN ('data_checksums', 'wal_writer_delay') ORDER BY name`,
      );
      assert.deepEqual(rows, [
        { name: 'data_checksums', setting: 'off' },
        { name: 'wal_writer_delay', setting: '10' },
      ]);
    } finally {
      await client.end();
    }

    // SIGTERM: the server stops accepting, finishes, stops the cluster and exits 0.
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0, first.output());
    assert.match(first.output(), /"msg":"stopped"/);
    assert.ok(!existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'the cluster was stopped');

    // A crash leaves a postmaster.pid naming a process that is not postgres (here: pid 1's
    // neighbour, our own pid): the next start must clean it up and come up with the data kept.
    const pidFile = join(dataDir, 'pg', 'postmaster.pid');
    writeFileSync(pidFile, `${process.pid}\n${join(dataDir, 'pg')}\n1700000000\n${port}\n\n127.0.0.1\n  5432001  0\nready\n`);
    const second = serve(dataDir, port);
    await waitForHealth(port, 90_000);
    const again = await fetch(`http://127.0.0.1:${port}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'proc@example.com', name: 'Proc' }),
    });
    assert.equal(again.status, 201, 'the account registered before the crash is still there (re-registration before init)');
    const pidNow = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    assert.notEqual(pidNow, process.pid);
    second.child.kill('SIGINT');
    assert.equal(await second.exited, 0, second.output());

    // `regwatch migrate` on the same data directory (no server running) starts and stops the cluster itself.
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir };
    delete env.DATABASE_URL;
    const mig = await run(process.execPath, [BIN, 'migrate'], env);
    assert.equal(mig.code, 0);
    assert.match(mig.stdout, /up to date/);
  },
);

test(
  'two processes on one embedded cluster: the one that started it leaves first, the other keeps its database and, last, stops it',
  { timeout: 300_000 },
  async () => {
    const dataDir = tempDataDir('regwatch-join-');
    const [portA, portB] = [await freePort(), await freePort()];
    const a = serve(dataDir, portA);
    await waitForHealth(portA, 90_000);
    const b = serve(dataDir, portB);
    await waitForHealth(portB, 90_000);
    assert.match(b.output(), /joined the embedded PostgreSQL already running/);

    a.child.kill('SIGTERM');
    assert.equal(await a.exited, 0, a.output());
    assert.match(a.output(), /left running for the other regwatch processes/);
    assert.ok(existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'the cluster still runs');
    const health = await fetch(`http://127.0.0.1:${portB}/health`);
    assert.equal(health.status, 200, 'the process that joined keeps its database');
    const reg = await fetch(`http://127.0.0.1:${portB}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'joined@example.com', name: 'Joined' }),
    });
    assert.equal(reg.status, 201);

    b.child.kill('SIGTERM');
    assert.equal(await b.exited, 0, b.output());
    assert.ok(!existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'the last process to leave stopped the cluster');
  },
);

test('the embedded buffer cache is a quarter of memory, between 128 MB and 2 GB', () => {
  const gb = 1024 ** 3;
  assert.equal(sharedBuffersMb(256 * 1024 ** 2), 128);
  assert.equal(sharedBuffersMb(4 * gb), 1024);
  assert.equal(sharedBuffersMb(24 * gb), 2048);
});

test('an invalid configuration is reported at once, every problem by variable, exit 78', async () => {
  const env: Record<string, string | undefined> = { ...process.env, PORT: 'abc', PAYMENT_PROVIDER: 'stripe', REGISTRY_SOURCES: 'krs,nope' };
  delete env.STRIPE_SECRET_KEY;
  const { code, stderr: err } = await run(process.execPath, [BIN, 'serve'], env);
  assert.equal(code, 78);
  for (const v of ['PORT', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'REGISTRY_SOURCES', 'KRS_API_URL'])
    assert.match(err, new RegExp(v), `mentions ${v}: ${err}`);
});

test(
  'a DATA_DIR that cannot be made (under /proc) fails at once with the system error, not a hang',
  { skip: existsSync('/proc/self') ? false : 'needs /proc', timeout: 30_000 },
  async () => {
    const env: Record<string, string | undefined> = { ...process.env, DATA_DIR: '/proc/regwatch-test/data' };
    delete env.DATABASE_URL;
    const { code, stderr } = await run(process.execPath, [BIN, 'migrate'], env);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /regwatch migrate: ENOENT: no such file or directory, mkdir '\/proc\/regwatch-test'/);
  },
);

test('a start that fails (the port taken) exits 1, with ROLE=api as with ROLE=all, and one clean shutdown', async () => {
  const dataDir = tempDataDir('regwatch-port-taken-');
  const blocker = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
  defer(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  for (const role of ['api', 'all']) {
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      ROLE: role,
      DEMO_COMPANIES: '0',
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const { code, stdout, stderr } = await run(process.execPath, [BIN, 'serve'], env);
    assert.equal(code, 1, `ROLE=${role}: ${stderr}`);
    assert.match(stderr, /regwatch serve: listen EADDRINUSE/);
    assert.ok(!stdout.includes('"level":50'), `ROLE=${role} logged an error: ${stdout}`);
    assert.equal(stdout.match(/"msg":"stopped"/g)?.length, 1, stdout);
  }
});

test(
  'the embedded PostgreSQL also works for an ordinary user (run as nobody)',
  { skip: process.getuid?.() === 0 && existsSync('/usr/sbin/runuser') ? false : 'needs root and runuser to switch users' },
  async () => {
    const home = mkdtempSync(join(tmpdir(), 'regwatch-nobody-'));
    chmodSync(home, 0o777);
    defer(() => rmSync(home, { recursive: true, force: true }));
    const { code, output: out } = await run('/usr/sbin/runuser', [
      '-u',
      'nobody',
      '--',
      'env',
      `DATA_DIR=${home}/data`,
      `HOME=${home}`,
      `TMPDIR=${home}`,
      `PATH=${process.env.PATH}`,
      process.execPath,
      BIN,
      'migrate',
    ]);
    assert.equal(code, 0, out);
    assert.match(out, /Applied \d+ migration/);
    assert.ok(existsSync(join(home, 'data', 'pg', 'PG_VERSION')));
  },
);
