import { defer } from './cleanup.ts';
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { buildStandaloneApp } from '../../src/app.ts';
import { compose, type PartOverrides } from '../../src/composition.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createManualClock, systemClock, type Clock } from '../../src/lib/clock.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export { createManualClock };

export interface TestApp {
  app: FastifyInstance;
  db: TestDatabase;
  config: Config;
  clock: Clock;
  /** A logger whose lines are kept for assertions (e.g. that no secret is logged). */
  logLines: string[];
}

/** The test config: the real loadConfig over a minimal environment plus overrides. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    REGISTRY_SOURCES: '',
    PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
    LOG_LEVEL: 'warn',
    ...env,
  });
}

/**
 * The real app (every route and hook) on a fresh database of this test file. `inject()` drives it;
 * pass `listen: true` for a real socket (browser tests).
 */
export async function createTestApp(
  options: {
    env?: Record<string, string | undefined>;
    clock?: Clock;
    db?: TestDatabase;
    redis?: Redis;
    overrides?: PartOverrides;
    listen?: boolean;
  } = {},
): Promise<TestApp & { baseUrl: string }> {
  const db = options.db ?? (await createTestDatabase());
  const logLines: string[] = [];
  const logger = pino(
    {
      level: 'info',
      redact: (await import('../../src/logger.ts')).REDACT_PATHS,
      serializers: (await import('../../src/logger.ts')).LOG_SERIALIZERS,
    },
    {
      write: (s: string) => {
        logLines.push(s);
      },
    },
  );
  let config = testConfig(options.env);
  const clock = options.clock ?? systemClock;
  const app = await buildStandaloneApp({ config, db: db.db, logger, clock }, { redis: options.redis, overrides: options.overrides });
  let baseUrl = '';
  if (options.listen) {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${addr.port}`;
    if (!options.env?.PUBLIC_BASE_URL) {
      // Links in mail must point at this server: rebuild with the real base URL.
      await app.close();
      config = testConfig({ ...options.env, PUBLIC_BASE_URL: baseUrl, PORT: String(addr.port) });
      const app2 = await buildStandaloneApp({ config, db: db.db, logger, clock }, { redis: options.redis, overrides: options.overrides });
      await app2.listen({ port: addr.port, host: '127.0.0.1' });
      defer(() => app2.close());
      return { app: app2, db, config, clock, logLines, baseUrl };
    }
  }
  defer(() => app.close());
  return { app, db, config, clock, logLines, baseUrl };
}

/** Runs the real graphile-worker with every module's tasks against the test database. */
export async function startTestWorker(
  t: { db: TestDatabase; config: Config; clock: Clock },
  logger = pino({ level: 'warn' }),
): Promise<Runner> {
  const parts = compose({ config: t.config, db: t.db.db, logger, clock: t.clock });
  const runner = await startWorker({ pool: t.db.pool, logger, modules: parts.jobs, concurrency: 2, pollInterval: 100 });
  defer(async () => {
    await runner.stop();
    await parts.close();
  });
  return runner;
}

/** Runs queued jobs until none is left (graphile-worker's runOnce semantics, through our task list). */
export async function drainJobs(t: { db: TestDatabase; config: Config; clock: Clock }): Promise<void> {
  const { runOnce } = await import('graphile-worker');
  const logger = pino({ level: 'warn' });
  const parts = compose({ config: t.config, db: t.db.db, logger, clock: t.clock });
  const taskList = Object.assign({}, ...parts.jobs.map((m) => m.tasks));
  await runOnce({ pgPool: t.db.pool, taskList, noHandleSignals: true, logger: undefined as never });
  await parts.close();
}

/**
 * drainJobs until no job is due: runOnce takes one job per named queue (the queue is unlocked as
 * its job completes, after runOnce has looked for the next). A failed job waiting out its backoff
 * is left for later.
 */
export async function drainQueues(t: { db: TestDatabase; config: Config; clock: Clock }): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await drainJobs(t);
    const { rows } = await t.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE attempts < max_attempts AND (run_at <= now() OR locked_at IS NOT NULL)',
    );
    if (rows[0]!.n === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('jobs are still due after 50 passes of the worker');
}

export interface TestAccount {
  userRef: string;
  email: string;
  master: string;
  masterRef: string;
}

let seq = 0;

/** Registers and initialises an account through the API, reading the token from the outbox. */
export async function createAccount(
  t: TestApp,
  email = `user${++seq}-${Date.now()}@example.com`,
  name = 'Test Account',
): Promise<TestAccount> {
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email, name } });
  if (reg.statusCode !== 201) throw new Error(`register: ${reg.statusCode} ${reg.body}`);
  const token = await latestInitToken(t, email);
  const init = await t.app.inject({ method: 'POST', url: '/api/v1/auth/init', payload: { token } });
  if (init.statusCode !== 200) throw new Error(`init: ${init.statusCode} ${init.body}`);
  const body = init.json();
  return { userRef: body.user_ref, email: body.email, master: body.master_token, masterRef: body.token_ref };
}

export async function latestMail(t: { db: TestDatabase }, to: string, kind?: string) {
  let q = t.db.db.selectFrom('mail_outbox').selectAll().where('to_address', '=', to.toLowerCase());
  if (kind) q = q.where('kind', '=', kind);
  return q.orderBy('id', 'desc').executeTakeFirst();
}

export async function latestInitToken(t: { db: TestDatabase }, email: string): Promise<string> {
  const mail = await latestMail(t, email, 'registration');
  const m = /^Initialization token: (\S+)$/m.exec(mail?.text_body ?? '');
  if (!m) throw new Error(`no initialization token mailed to ${email}`);
  return m[1];
}

export async function createApiToken(
  t: TestApp,
  master: string,
  name = 'integration',
  expiresInDays?: number,
): Promise<{ plaintext: string; ref: string }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/tokens',
    headers: { authorization: `Bearer ${master}` },
    payload: { name, ...(expiresInDays ? { expires_in_days: expiresInDays } : {}) },
  });
  if (res.statusCode !== 201) throw new Error(`create token: ${res.statusCode} ${res.body}`);
  const d = res.json().data;
  return { plaintext: d.plaintext, ref: d.token_ref };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
