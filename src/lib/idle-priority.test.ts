import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { createDatabase } from '../db/database.ts';
import { createIdlePriority, localBackendPid, SCHED_IDLE, setIdlePolicy, threadPoliciesOf } from './idle-priority.ts';

const SCHED_OTHER = 0;
// The test PostgreSQL (scripts/test.ts): on this machine, as a user this process may reschedule (root here).
const url = process.env.REGWATCH_TEST_ADMIN_URL!;

/** A logger whose lines are kept, parsed. */
function capturedLogger() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg), lines };
}

/** A child Node.js process with several threads (V8's and libuv's), ended when the test ends. */
async function nodeChild(t: { after: (fn: () => void) => void }) {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); process.stdout.write("up")'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  t.after(() => child.kill('SIGKILL'));
  await once(child.stdout!, 'data');
  return child.pid!;
}

test('setIdlePolicy: every thread of a real child process is SCHED_IDLE afterwards, read back from /proc', async (t) => {
  const pid = await nodeChild(t);
  const before = threadPoliciesOf(pid)!;
  assert.ok(before.size > 1, 'the child has several threads');
  assert.deepEqual(new Set(before.values()), new Set([SCHED_OTHER]));
  await setIdlePolicy(pid);
  const after = threadPoliciesOf(pid)!;
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort());
  assert.deepEqual(new Set(after.values()), new Set([SCHED_IDLE]), JSON.stringify([...after]));
  await assert.rejects(setIdlePolicy(pid, '/nonexistent/chrt'), /not found/);
  assert.equal(threadPoliciesOf(2 ** 22 + 1), null, 'a process that does not exist');
});

test('applyToProcess: the process (here a child given by pid) goes idle; without chrt one warning and false', async (t) => {
  const pid = await nodeChild(t);
  const ok = capturedLogger();
  assert.equal(await createIdlePriority({ logger: ok.logger, pid }).applyToProcess(), true);
  assert.deepEqual(new Set(threadPoliciesOf(pid)!.values()), new Set([SCHED_IDLE]));
  assert.deepEqual(ok.warnings(), []);

  const other = await nodeChild(t);
  const bad = capturedLogger();
  assert.equal(await createIdlePriority({ logger: bad.logger, pid: other, chrt: '/nonexistent/chrt' }).applyToProcess(), false);
  assert.deepEqual(bad.warnings(), ['could not put the worker process under SCHED_IDLE; it runs at normal priority']);
  assert.deepEqual(new Set(threadPoliciesOf(other)!.values()), new Set([SCHED_OTHER]), 'left as it was');
});

test("a pool with the onConnect hook: each local backend is SCHED_IDLE, a plain pool's is not", async () => {
  const log = capturedLogger();
  const idle = createIdlePriority({ logger: log.logger });
  const hooked = createDatabase(url, { max: 2, applicationName: 'idle-priority-test', onConnect: idle.onConnect });
  const plain = createDatabase(url, { max: 1, applicationName: 'idle-priority-test-plain' });
  try {
    const pidsOf = async (pool: pg.Pool) => {
      const [a, b] = [await pool.connect(), await pool.connect().catch(() => null)];
      try {
        return await Promise.all(
          [a, b]
            .filter((c) => c !== null)
            .map(async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid),
        );
      } finally {
        a.release();
        b?.release();
      }
    };
    const hookedPids = await pidsOf(hooked.pool);
    assert.equal(hookedPids.length, 2);
    for (const pid of hookedPids) assert.deepEqual([...threadPoliciesOf(pid)!.values()], [SCHED_IDLE], `backend ${pid}`);
    const plainClient = await plain.pool.connect();
    try {
      const pid = (await plainClient.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      assert.deepEqual([...threadPoliciesOf(pid)!.values()], [SCHED_OTHER]);
      assert.equal(await localBackendPid(plainClient), pid, 'a connection to 127.0.0.1 is local, its backend found by its port');
    } finally {
      plainClient.release();
    }
    assert.deepEqual(log.warnings(), []);
  } finally {
    await hooked.close();
    await plain.close();
  }
});

test("localBackendPid: a pid that is not this connection's backend, or a server elsewhere, is left alone", async () => {
  const fake = (pid: number, stream: object) =>
    ({ query: async () => ({ rows: [{ pid }] }), connection: { stream } }) as unknown as pg.ClientBase;
  // This process is no PostgreSQL backend (a server in another container may report any pid).
  assert.equal(await localBackendPid(fake(process.pid, { remoteAddress: '127.0.0.1', localPort: 1 })), null);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    // A real backend, but of another connection (another port), or reached at an address not ours.
    assert.equal(await localBackendPid(fake(pid, { remoteAddress: '127.0.0.1', localPort: 1 })), null);
    assert.equal(await localBackendPid(fake(pid, { remoteAddress: '192.0.2.7', localPort: 1 })), null);
    assert.equal(await localBackendPid(client), pid);
  } finally {
    await client.end();
  }
});

test('onConnect: a failing chrt warns once and is not tried again; a remote backend is told once at info', async () => {
  const log = capturedLogger();
  const idle = createIdlePriority({ logger: log.logger, chrt: '/nonexistent/chrt' });
  const db = createDatabase(url, { max: 3, onConnect: idle.onConnect });
  try {
    const clients = await Promise.all([db.pool.connect(), db.pool.connect(), db.pool.connect()]);
    for (const c of clients) assert.equal((await c.query('SELECT 1 AS x')).rows[0].x, 1, 'the connection works all the same');
    for (const c of clients) c.release();
  } finally {
    await db.close();
  }
  assert.equal(log.warnings().length, 1, JSON.stringify(log.lines));
  assert.match(log.warnings()[0]!, /could not put a PostgreSQL backend under SCHED_IDLE/);

  const remote = capturedLogger();
  const hook = createIdlePriority({ logger: remote.logger }).onConnect;
  const elsewhere = {
    query: async () => ({ rows: [{ pid: process.pid }] }),
    connection: { stream: { remoteAddress: '192.0.2.7', localPort: 1 } },
  };
  await hook(elsewhere as unknown as pg.ClientBase);
  await hook(elsewhere as unknown as pg.ClientBase);
  assert.deepEqual(remote.warnings(), []);
  assert.equal(remote.lines.filter((l) => /not on this machine/.test(l.msg)).length, 1);
});
