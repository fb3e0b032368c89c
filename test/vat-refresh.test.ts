import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchedNips } from '../src/registry/vat-refresh.ts';
import { createTestDatabase } from './helpers/db.ts';
import { storedIdentifierKey } from '../src/lib/identifiers.ts';

const t = await createTestDatabase();
const ids: string[] = [];

test('the VAT list re-checks the NIPs of watched companies: distinct, not removed, paged', async () => {
  const acct = await t.db
    .insertInto('accounts')
    .values({ user_ref: 'VATREFRESH01', email: 'v@example.com', name: 'V', status: 'initialized' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const acct2 = await t.db
    .insertInto('accounts')
    .values({ user_ref: 'VATREFRESH02', email: 'w@example.com', name: 'W', status: 'initialized' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const nips = ['5261040828', '5270103391', '7740001454', '1132853869'];
  for (const [i, nip] of nips.entries()) {
    const c = await t.db
      .insertInto('companies')
      .values({
        primary_identifier_type: 'NIP',
        primary_identifier: nip,
        name: `C${i}`,
        status: 'ACTIVE',
        snapshot: '{}',
        content_hash: Buffer.alloc(16),
        source_fingerprints: '{}',
        name_folded: `c${i}`,
        city_folded: null,
        voivodeship_folded: null,
        postal_code: null,
        legal_form: null,
        activity_codes: [],
        main_activity: null,
        activity_start: null,
        has_phone: false,
        has_email: false,
        has_fax: false,
        first_seen_date: '2026-11-01',
        last_changed_date: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.db
      .insertInto('company_identifiers')
      .values({ key: storedIdentifierKey('NIP', nip), company_id: c.id })
      .execute();
    ids.push(c.id);
  }
  const watch = (account: string, company: string, removed = false) =>
    t.db
      .insertInto('watchlist')
      .values({
        account_id: account,
        company_id: company,
        watched_since: '2026-11-02T10:00:00Z',
        watched_date: '2026-11-02',
        removed_at: removed ? '2026-11-03T10:00:00Z' : null,
      } as never)
      .execute();
  await watch(acct.id, ids[0]);
  await watch(acct2.id, ids[0]); // watched twice: asked once
  await watch(acct.id, ids[1]);
  await watch(acct.id, ids[2], true); // removed: not asked
  // ids[3] is not watched at all.
  const got: string[] = [];
  for await (const n of watchedNips(t.db, 1)('2026-11-04')) got.push(n);
  assert.deepEqual(got, ['5261040828', '5270103391']);
});

test('when the budget covers fewer NIPs than are watched, each day starts where the last one stopped, wrapping round', async () => {
  const acct = await t.db
    .insertInto('accounts')
    .values({ user_ref: 'VATREFRESH03', email: 'x@example.com', name: 'X', status: 'initialized' })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const id of [ids[2], ids[3]]) {
    await t.db
      .insertInto('watchlist')
      .values({ account_id: acct.id, company_id: id, watched_since: '2026-11-02T10:00:00Z', watched_date: '2026-11-02' } as never)
      .execute();
  }
  const all = ['1132853869', '5261040828', '5270103391', '7740001454'];
  const day = async (date: string, perDay: number) => {
    const got: string[] = [];
    for await (const n of watchedNips(t.db, 2, perDay)(date)) got.push(n);
    return got;
  };
  assert.deepEqual(await day('2026-11-04', 10), all, 'a budget covering everyone: NIP order');
  // 2026-11-07 is day 20764 since 1970-01-01: it starts at position 20764 * 3 mod 4 = 0, the next day at 3, then 2.
  const d1 = await day('2026-11-07', 3);
  const d2 = await day('2026-11-08', 3);
  const d3 = await day('2026-11-09', 3);
  assert.deepEqual(d1, all);
  assert.deepEqual(d2, [all[3], all[0], all[1], all[2]]);
  assert.deepEqual(d3, [all[2], all[3], all[0], all[1]]);
  assert.deepEqual(new Set([...d1.slice(0, 3), ...d2.slice(0, 3)]), new Set(all), "two days' budgets cover every watched NIP");
});
