import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createTestDatabase } from './helpers/db.ts';
import { BIN } from './helpers/serve.ts';

/**
 * DECISIONS 1: `regwatch daily --date YYYY-MM-DD --source SOURCE` "runs the daily change detection
 * for that date and exits 0 ... SOURCE is `file:PATH`, `synthetic[:SEED]` ... Any valid date is
 * accepted, past or future". The synthetic source's dates (src/registry/sources/synthetic/days.ts)
 * read the years 1 to 99 as 1901 to 1999 and refused them (found by an audit); the CLI's own
 * check (src/lib/dates.ts isIsoDate) and the `file:` source always took them.
 */

const t = await createTestDatabase();

function regwatch(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: t.url, LOG_LEVEL: 'warn', REGISTRY_SOURCES: '', DEMO_COMPANIES: '300' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('regwatch daily --source synthetic accepts a valid date of the years 1 to 99 and exits 0', async () => {
  for (const date of ['0001-01-01', '0099-12-31']) {
    const r = await regwatch(['daily', '--date', date, '--source', 'synthetic:7']);
    assert.equal(r.code, 0, `${date}: exit ${r.code}, stderr: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^daily ${date} synthetic:7: new=\\d+ updated=\\d+ deleted=\\d+ events=\\d+`));
  }
});

test('regwatch seed --synthetic N --date in the years 1 to 99 exits 0', async () => {
  const r = await regwatch(['seed', '--synthetic', '3', '--seed', '5', '--date', '0050-06-01']);
  assert.equal(r.code, 0, `exit ${r.code}, stderr: ${r.stderr}`);
});
