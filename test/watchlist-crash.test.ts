import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pino from 'pino';
import { settleWatchRequest } from '../src/modules/watchlist/jobs.ts';
import type { ImportCompany } from '../src/registry/import.ts';
import { ImportUnavailableError } from '../src/registry/import.ts';
import { bearer, createAccount, createTestApp } from './helpers/app.ts';
import { nipFor } from './helpers/registry.ts';
import { accountIdOf, ledger, runDay } from './watchlist-support.ts';
import { storedIdentifierKey } from '../src/lib/identifiers.ts';

/**
 * The add job dies midway (an import that throws, as a crashed or restarted worker leaves it):
 * the next run carries on from what was settled, and the request completes, refunds and mails
 * exactly once. The job handler is called directly so each step can be checked.
 * (test/watchlist-kill.test.ts does the same with a worker process killed by SIGKILL.)
 */

const t = await createTestApp();
const acct = await createAccount(t);
const accountId = await accountIdOf(t, acct.userRef);
const logger = pino({ level: 'silent' });
await runDay(t.db.db, '2026-11-20', [{ n: 301 }, { n: 302 }]);

async function add(values: string[]): Promise<{ requestId: string; ref: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/companies/add',
    headers: bearer(acct.master),
    payload: { identifier_type: 'NIP', identifier_value: values },
  });
  assert.equal(res.statusCode, 202, res.body);
  const ref = res.json().request_id as string;
  const { rows } = await sql<{ id: string }>`SELECT id FROM watch_requests WHERE request_ref = ${ref}`.execute(t.db.db);
  return { requestId: rows[0]!.id, ref };
}

async function items(requestId: string): Promise<string[]> {
  const { rows } = await sql<{ identifier_value: string; status: string }>`
    SELECT identifier_value, status FROM watch_request_items WHERE request_id = ${requestId} ORDER BY position`.execute(t.db.db);
  return rows.map((r) => `${r.identifier_value}:${r.status}`);
}

async function watchlistMails(): Promise<number> {
  const rows = await t.db.db.selectFrom('mail_outbox').select('id').where('kind', '=', 'watchlist').execute();
  return rows.length;
}

const deps = (importCompany: ImportCompany) => ({ config: t.config, db: t.db.db, logger, clock: t.clock, importCompany });

test('an import that throws midway: known companies stay watched, the rest is settled by the next run, charged once, refunded once, mailed once', async () => {
  const { requestId, ref } = await add([nipFor(301), nipFor(900), nipFor(901), nipFor(302)]);
  let calls = 0;
  const crashing: ImportCompany = async () => {
    calls++;
    if (calls === 2) throw new Error('worker process died');
    return { found: false };
  };
  await assert.rejects(settleWatchRequest(deps(crashing), requestId), /worker process died/);
  assert.deepEqual(await items(requestId), [
    `${nipFor(301)}:watched`,
    `${nipFor(900)}:not_found`,
    `${nipFor(901)}:queued`,
    `${nipFor(302)}:watched`,
  ]);
  assert.equal(await watchlistMails(), 0, 'no mail before the request completes');
  assert.deepEqual(
    (await ledger(t, accountId)).map((r) => [r.type, r.amount]),
    [['usage', -4]],
  );

  const imports: string[] = [];
  const working: ImportCompany = async (id) => {
    imports.push(id.value);
    return { found: false };
  };
  assert.equal(await settleWatchRequest(deps(working), requestId), 'completed');
  assert.deepEqual(imports, [nipFor(901)], 'only what was still queued is imported again');
  assert.deepEqual(await items(requestId), [
    `${nipFor(301)}:watched`,
    `${nipFor(900)}:not_found`,
    `${nipFor(901)}:not_found`,
    `${nipFor(302)}:watched`,
  ]);

  // A third run (a job delivered twice) changes nothing.
  assert.equal(await settleWatchRequest(deps(working), requestId), 'already_completed');
  assert.deepEqual(
    (await ledger(t, accountId)).map((r) => [r.type, r.amount, r.reference]),
    [
      ['usage', -4, `companies.add:${ref}`],
      ['refund', 2, `companies.add.refund:${ref}`],
    ],
  );
  assert.equal(await watchlistMails(), 1);
});

test('registries that cannot be asked: the job retries; on its last attempt the identifier counts as not found and is refunded', async () => {
  const { requestId, ref } = await add([nipFor(902)]);
  const down: ImportCompany = async () => {
    throw new ImportUnavailableError(['krs']);
  };
  await assert.rejects(settleWatchRequest(deps(down), requestId), ImportUnavailableError);
  assert.deepEqual(await items(requestId), [`${nipFor(902)}:queued`]);
  assert.equal(await settleWatchRequest(deps(down), requestId, { finalAttempt: true }), 'completed');
  assert.deepEqual(await items(requestId), [`${nipFor(902)}:not_found`]);
  const rows = (await ledger(t, accountId)).filter((r) => r.reference?.endsWith(ref));
  assert.deepEqual(
    rows.map((r) => [r.type, r.amount]),
    [
      ['usage', -1],
      ['refund', 1],
    ],
  );
});

test('an import that finds a company already on the list (another identifier of it): a no-op, refunded', async () => {
  const { requestId } = await add([nipFor(903)]);
  const company = await t.db.db
    .selectFrom('company_identifiers')
    .select('company_id')
    .where('key', '=', storedIdentifierKey('NIP', nipFor(301)))
    .executeTakeFirstOrThrow();
  const sameCompany: ImportCompany = async () => ({ found: true, companyId: company.company_id });
  assert.equal(await settleWatchRequest(deps(sameCompany), requestId), 'completed');
  assert.deepEqual(await items(requestId), [`${nipFor(903)}:already_watched`]);
  const last = (await ledger(t, accountId)).at(-1)!;
  assert.deepEqual([last.type, last.amount], ['refund', 1]);
});

test('an unknown request id (an account deleted meanwhile) is a no-op', async () => {
  assert.equal(
    await settleWatchRequest(
      deps(async () => ({ found: false })),
      '999999999',
    ),
    'missing',
  );
});
