import { defer } from './cleanup.ts';
import pg from 'pg';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.ts';

export interface TestDatabase extends DatabaseHandle {
  url: string;
  name: string;
}

let counter = 0;

/**
 * A fresh, migrated database for this test file, cloned from the template `npm test` built.
 * Dropped when the file's tests end.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.REGWATCH_TEST_ADMIN_URL;
  const template = process.env.REGWATCH_TEST_TEMPLATE;
  if (!adminUrl || !template) {
    throw new Error('Run database tests through `npm test` (scripts/test.ts), which prepares the test PostgreSQL.');
  }
  const name = `regwatch_t_${process.pid}_${++counter}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const handle = createDatabase(url, { max: 10 });
  const db: TestDatabase = { ...handle, url, name };
  defer(async () => {
    await handle.close();
    const a = new pg.Client({ connectionString: adminUrl });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await a.end();
  });
  return db;
}
