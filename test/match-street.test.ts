import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { streetOf } from '../src/modules/match/repo.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

/** The match index's street of a snapshot (src/modules/match/repo.ts streetOf): the first non-empty one of its profiles. */

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.close();
});

const street = async (snapshot: unknown): Promise<string> => {
  const { rows } = await sql<{ s: string }>`SELECT ${streetOf(sql`${JSON.stringify(snapshot)}::text`)} AS s`.execute(db.db);
  return rows[0]!.s;
};
const profile = (street: string | null | undefined) => ({
  source: 'x',
  ...(street === undefined ? {} : { address: street === null ? null : { street } }),
});

test('the first non-empty street of the profiles, in their order', async () => {
  assert.equal(await street({ profiles: [profile('ul. Długa'), profile('ul. Polna')] }), 'ul. Długa');
  assert.equal(await street({ profiles: [profile(''), profile('ul. Polna')] }), 'ul. Polna');
  assert.equal(await street({ profiles: [profile(undefined), profile(null), profile(''), profile('ul. Morska')] }), 'ul. Morska');
  assert.equal(await street({ profiles: [{ address: { street: null } }, profile('b')] }), 'b');
  assert.equal(await street({ profiles: [profile(' ')] }), ' ');
});

test("'' when no profile has a street", async () => {
  assert.equal(await street({ profiles: [] }), '');
  assert.equal(await street({ profiles: [profile(''), profile(undefined)] }), '');
  assert.equal(await street({ identity: {} }), '');
});
