import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createTestDatabase } from './helpers/db.ts';
import { companySnapshot, writeNdjson } from './helpers/registry.ts';
import { WORKER_MIN_FILE_BYTES } from '../src/registry/daily/full-export-heuristics.ts';

const t = await createTestDatabase();
const dir = mkdtempSync(join(tmpdir(), 'regwatch-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const bin = join(import.meta.dirname, '..', 'bin', 'regwatch.js');

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function regwatch(args: string[], onSpawn?: (child: ReturnType<typeof spawn>) => void): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, DATABASE_URL: t.url, LOG_LEVEL: 'warn', REGISTRY_SOURCES: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
    onSpawn?.(child);
  });
}

async function scalar(query: ReturnType<typeof sql<{ n: number }>>): Promise<number> {
  return (await query.execute(t.db)).rows[0]!.n;
}

test('regwatch daily prints one summary line and exits 0; a second run adds nothing', async () => {
  const day1 = writeNdjson(
    join(dir, 'day1.ndjson'),
    [1, 2, 3].map((n) => companySnapshot({ n })),
  );
  const first = await regwatch(['daily', '--date', '2026-11-01', '--source', `file:${day1}`]);
  assert.equal(first.code, 0, first.stderr);
  const lines = first.stdout.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stdout, got: ${first.stdout}`);
  assert.match(lines[0]!, /new=3 updated=0 deleted=0 events=0/);

  const day2 = writeNdjson(join(dir, 'day2.ndjson'), [
    companySnapshot({ n: 1, name: 'NOWA NAZWA' }),
    companySnapshot({ n: 2, status: 'wykreślony', dates: [{ type: 'deletion', date: '2026-11-02' }] }),
    companySnapshot({ n: 4 }),
  ]);
  const second = await regwatch(['daily', '--date', '2026-11-02', '--source', `file:${day2}`]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /new=1 updated=2 deleted=1 events=3/);

  const events = await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM events`);
  const again = await regwatch(['daily', '--date', '2026-11-02', '--source', `file:${day2}`]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /new=1 updated=2 deleted=1 events=3/);
  assert.equal(await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM events`), events);
});

test('usage errors exit 2 without touching the database', async () => {
  for (const args of [
    ['daily', '--source', 'file:/nope'],
    ['daily', '--date', '2026-02-30', '--source', 'synthetic'],
    ['daily', '--date', '2026-11-01'],
    ['daily', '--date', '2026-11-01', '--source', 'ftp:x'],
    ['daily', '--date', '2026-11-01', '--source', `file:${join(dir, 'missing.ndjson')}`],
    ['seed', '--synthetic', 'many'],
  ]) {
    const r = await regwatch(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
  }
});

test('a daily run killed with SIGKILL mid-way, then run again, loses and doubles nothing', async () => {
  const size = 12_000;
  const base = writeNdjson(
    join(dir, 'big-base.ndjson'),
    Array.from({ length: size }, (_, i) => companySnapshot({ n: 100_000 + i })),
  );
  const load = await regwatch(['daily', '--date', '2026-11-10', '--source', `file:${base}`]);
  assert.equal(load.code, 0, load.stderr);
  assert.match(load.stdout, new RegExp(`new=${size} `));

  const changed = writeNdjson(
    join(dir, 'big-changed.ndjson'),
    Array.from({ length: size }, (_, i) => companySnapshot({ n: 100_000 + i, name: `NOWA ${i}` })),
  );
  // Both files go through the file-preparing worker, which the command starts before the database opens.
  assert.ok(statSync(base).size >= WORKER_MIN_FILE_BYTES && statSync(changed).size >= WORKER_MIN_FILE_BYTES);
  const args = ['daily', '--date', '2026-11-11', '--source', `file:${changed}`, '--batch-size', '500'];
  const killed = await regwatch(args, (child) => {
    const poll = setInterval(
      () =>
        void (async () => {
          const done = await scalar(
            sql<{ n: number }>`SELECT coalesce(max(events_count), 0)::int AS n FROM daily_runs WHERE run_date = '2026-11-11'`,
          );
          if (done >= 1000) {
            clearInterval(poll);
            child.kill('SIGKILL');
          }
        })(),
      20,
    );
    child.on('exit', () => clearInterval(poll));
  });
  assert.equal(killed.signal, 'SIGKILL', `the run finished before it could be killed: ${killed.stdout}`);
  const partial = await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE event_date = '2026-11-11'`);
  assert.ok(partial >= 1000 && partial < size, `partial events: ${partial}`);

  const resumed = await regwatch(args);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, new RegExp(`new=0 updated=${size} deleted=0 events=${size} `));
  assert.match(resumed.stdout, /resumed/);
  assert.equal(await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE event_date = '2026-11-11'`), size);
  assert.equal(
    await scalar(sql<{ n: number }>`SELECT count(DISTINCT company_id)::int AS n FROM events WHERE event_date = '2026-11-11'`),
    size,
  );
});

test('regwatch seed loads N synthetic companies once per seed', async () => {
  const before = await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`);
  const first = await regwatch(['seed', '--synthetic', '300', '--seed', '5', '--date', '2026-11-20']);
  assert.equal(first.code, 0, first.stderr);
  // A generated identifier may belong to a company this file made earlier: that one is updated.
  const m = /new=(\d+) updated=(\d+)/.exec(first.stdout);
  assert.ok(m, first.stdout);
  const added = Number(m[1]);
  assert.ok(added >= 290 && added + Number(m[2]) <= 300, first.stdout);
  assert.equal(await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`), before + added);
  const again = await regwatch(['seed', '--synthetic', '300', '--seed', '5', '--date', '2026-11-20']);
  assert.match(again.stdout, /already completed/);
  assert.equal(await scalar(sql<{ n: number }>`SELECT count(*)::int AS n FROM companies`), before + added);
});
