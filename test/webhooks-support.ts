/** Shared by the test/webhooks-*.test.ts files: a receiver verifying every message, and setup helpers. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../src/db/database.ts';
import type { Config } from '../src/config.ts';
import { systemClock, type Clock } from '../src/lib/clock.ts';
import type { Sender } from '../src/modules/webhooks/delivery.ts';
import type { DispatcherOptions } from '../src/modules/webhooks/dispatcher.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { createWebhooksModule } from '../src/modules/webhooks/module.ts';
import { watchCompanies } from '../src/modules/watchlist/repo.ts';
import { defer } from './helpers/cleanup.ts';
import type { TestDatabase } from './helpers/db.ts';
import { nipFor } from './helpers/registry.ts';

export interface ReceivedMessage {
  path: string;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** The secrets (of those registered for the path) whose signature verified with standardwebhooks. */
  verifiedBy: string[];
  status: number;
}

/** What the receiver answers on a path: a status, or a promise that never settles (a hanging receiver). */
export type AnswerValue = number | 'hang' | { status: number; headers: Record<string, string>; body?: string };
export type Answer = (m: { path: string; id: string; attempt: number }) => AnswerValue | Promise<AnswerValue>;

/**
 * A real HTTP receiver on 127.0.0.1. Every message is verified with the `standardwebhooks`
 * package against every secret registered for its path; an unverifiable message is recorded with
 * `verifiedBy: []` (and the tests assert on it).
 */
export async function startReceiver(answer: Answer = () => 200) {
  const messages: ReceivedMessage[] = [];
  const secrets = new Map<string, string[]>();
  const attempts = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  let respond = answer;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      };
      const path = req.url ?? '/';
      const verifiedBy = (secrets.get(path) ?? []).filter((s) => {
        try {
          new Webhook(s).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      const n = (attempts.get(headers['webhook-id']) ?? 0) + 1;
      attempts.set(headers['webhook-id'], n);
      void (async () => {
        const a = await respond({ path, id: headers['webhook-id'], attempt: n });
        const status = a === 'hang' ? 0 : typeof a === 'number' ? a : a.status;
        messages.push({
          path,
          id: headers['webhook-id'],
          timestamp: headers['webhook-timestamp'],
          signature: headers['webhook-signature'],
          body,
          json: JSON.parse(body),
          verifiedBy,
          status,
        });
        if (a === 'hang') {
          hanging.add(res);
          return;
        }
        if (res.destroyed) return; // the sender gave up (or died) meanwhile
        res.writeHead(status, { 'content-type': 'text/plain', ...(typeof a === 'object' ? a.headers : {}) });
        res.end(typeof a === 'object' && a.body !== undefined ? a.body : 'x'.repeat(3000));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  defer(
    () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return {
    url,
    messages,
    addSecret: (path: string, secret: string) => secrets.set(path, [...(secrets.get(path) ?? []), secret]),
    setAnswer: (a: Answer) => {
      respond = a;
    },
    on: (path: string) => messages.filter((m) => m.path === path),
  };
}

/** The webhook jobs on the real graphile-worker in this process, with a short attempt timeout. */
export async function startWebhookWorker(
  t: { db: TestDatabase; config: Config; clock: Clock },
  opts: { attemptTimeoutMs?: number; logger?: Logger } = {},
) {
  const logger = opts.logger ?? pino({ level: 'warn' });
  const module = createWebhooksModule({
    db: t.db.db,
    clock: t.clock,
    config: t.config,
    logger,
    attemptTimeoutMs: opts.attemptTimeoutMs ?? 2000,
  });
  const runner = await startWorker({ pool: t.db.pool, logger, modules: [module.jobs], concurrency: 2, pollInterval: 50 });
  defer(async () => {
    await runner.stop();
    await module.close();
  });
  return runner;
}

/** Watches the companies numbered `ns` (test/helpers/registry.ts) for an account, from `since`. */
export async function watchNumbers(db: Db, accountId: string, ns: readonly number[], since: Date): Promise<void> {
  const { rows } = await sql<{ company_id: string }>`
    SELECT DISTINCT ci.company_id FROM company_identifiers ci WHERE ci.key = ANY(${ns.map((n) => String(10_000_000_000 + Number(nipFor(n))))}::bigint[])`.execute(
    db,
  );
  if (rows.length !== ns.length) throw new Error(`watchNumbers: ${rows.length} of ${ns.length} companies known`);
  await db.transaction().execute((trx) =>
    watchCompanies(
      trx,
      accountId,
      rows.map((r) => r.company_id),
      since,
    ),
  );
}

export async function deliveryCount(db: Db, status?: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM webhook_deliveries ${status ? sql`WHERE status = ${status}` : sql``}`.execute(db);
  return rows[0]!.n;
}

/**
 * For the tests that drive runDispatcher directly: an account with one endpoint (a fixed secret)
 * and `messages` messages due a minute ago, in the order of their ids.
 */
export async function insertEndpointWithMessages(
  db: Db,
  o: { ref: string; messages: number; failingSince?: Date },
): Promise<{ id: string; deliveries: string[] }> {
  const {
    rows: [acct],
  } = await sql<{ id: string }>`
    INSERT INTO accounts (user_ref, email, name, status) VALUES (${o.ref}, ${`${o.ref}@dispatch.test`}, 'dispatch', 'initialized') RETURNING id`.execute(
    db,
  );
  const {
    rows: [ep],
  } = await sql<{ id: string }>`
    INSERT INTO webhook_endpoints (account_id, url, failing_since) VALUES (${acct!.id}, 'http://127.0.0.1:9/hook', ${o.failingSince ?? null}) RETURNING id`.execute(
    db,
  );
  await sql`INSERT INTO webhook_secrets (endpoint_id, secret) VALUES (${ep!.id}, 'whsec_oFScPtb7SuAkMWW9nWk27k9mIDn9qsUrQzxkasNv5X4=')`.execute(
    db,
  );
  const { rows } = await sql<{ id: string }>`
    INSERT INTO webhook_deliveries (endpoint_id, account_id, event_type, payload, next_attempt_at)
    SELECT ${ep!.id}, ${acct!.id}, 'COMPANY_NAME_CHANGED', json_build_object('n', g), ${new Date(Date.now() - 60_000)}::timestamptz
    FROM generate_series(1, ${o.messages}) g ORDER BY g
    RETURNING id`.execute(db);
  return { id: ep!.id, deliveries: rows.map((r) => r.id) };
}

/** runDispatcher's options for those tests: the system clock, a silent logger, `sender`. */
export function dispatcherOptions(
  db: Db,
  sender: Sender,
  o: Pick<DispatcherOptions, 'retrySchedule' | 'concurrency' | 'perEndpoint' | 'leaseMs'>,
): DispatcherOptions {
  return { db, clock: systemClock, logger: pino({ level: 'silent' }), sender, ...o };
}
