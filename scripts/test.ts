/**
 * `npm test`: prepares one PostgreSQL for the whole run, then hands the test files to Node's
 * test runner. With DATABASE_URL unset it starts an embedded cluster in a temporary directory
 * (on a free port); with DATABASE_URL set it uses that server. Either way it builds one migrated
 * template database, and every test file clones its own fresh database from it (fast: a file
 * copy), so files never see each other's rows.
 *
 * Usage: node --import tsx scripts/test.ts [test files...]   (default: every *.test.ts under src/, test/ and packages/)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

function findTests(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) findTests(p, out);
    else if (name.endsWith('.test.ts')) out.push(relative(process.cwd(), p));
  }
  return out;
}

const args = process.argv.slice(2);
// packages/*: the workspaces' own tests (e.g. packages/sdk/test).
const files = args.length > 0 ? args : [...findTests('src'), ...findTests('test'), ...findTests('packages')].sort();

let adminUrl: string;
let stopEmbedded: (() => Promise<void>) | undefined;
let tmp: string | undefined;
if (process.env.DATABASE_URL) {
  adminUrl = process.env.DATABASE_URL;
  console.log(`# tests: PostgreSQL from DATABASE_URL`);
} else {
  tmp = mkdtempSync(join(tmpdir(), 'regwatch-test-'));
  const t0 = Date.now();
  const emb = await startEmbeddedDatabase(tmp);
  adminUrl = emb.adminUrl;
  stopEmbedded = emb.stop;
  console.log(`# tests: embedded PostgreSQL started in ${Date.now() - t0} ms`);
}

const template = `regwatch_tpl_${process.pid}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${template}`);
await admin.query(`CREATE DATABASE ${template}`);
const tplUrl = new URL(adminUrl);
tplUrl.pathname = `/${template}`;
const handle = createDatabase(tplUrl.toString(), { max: 2 });
await migrateToLatest(handle.db, handle.pool);
await handle.close();

const cleanup = async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => {});
  await admin.end().catch(() => {});
  await stopEmbedded?.();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
};

const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env: { ...process.env, REGWATCH_TEST_ADMIN_URL: adminUrl, REGWATCH_TEST_TEMPLATE: template, DATABASE_URL: '' },
});
const forward = (sig: NodeJS.Signals) => child.kill(sig);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
const code: number = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
await cleanup();
process.exit(code);
