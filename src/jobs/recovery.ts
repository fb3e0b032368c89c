import { randomInt } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { advisoryLockHeldSql } from '../db/advisory-locks.ts';
import { runConnectHook } from '../db/database.ts';

/**
 * Hands back the jobs of workers whose process died. graphile-worker marks a job it runs as locked
 * by its worker pool's id (`locked_by`; "worker" below means that pool) and, when the process dies without a graceful shutdown (SIGKILL, a crash, a
 * lost machine), leaves it locked for four hours before another worker may take it: an
 * interrupted daily run or a mail would wait that long after a restart.
 *
 * So every worker process holds a session advisory lock (LIVENESS_LOCK_CLASS, its random process
 * key) on a connection of its own, and records its workers' ids with that key in
 * `job_worker_liveness`. PostgreSQL releases the lock when the session ends, which is how a dead
 * process is told from a live one without heartbeats. Each worker process sweeps the table
 * periodically: a process seen without its lock for longer than the grace period has its workers'
 * jobs unlocked (`graphile_worker.force_unlock_workers`), a job cut short on its last attempt
 * getting that attempt back, and they run again — every job here is
 * idempotent (docs/configuration.md, "A worker process that dies"). The grace period covers a live process whose lock connection
 * dropped (a database restart): it takes the lock again within seconds.
 */

export const LIVENESS_LOCK_CLASS = 73_081;

/** Attempts past which a job whose process died on its last one is not given another. */
export const MAX_GIVEN_BACK = 50;

export interface RecoveryOptions {
  /** How often this process looks for dead ones (default 30 s). */
  sweepIntervalMs?: number;
  /** How long a process must have been seen dead before its jobs are handed back (default 60 s). */
  graceMs?: number;
}

export interface WorkerRecovery {
  /** Records a worker pool of this process (graphile-worker's `pool:create`): the id jobs are locked by. */
  register(workerId: string): void;
  /** After the runner has stopped: forgets this process's workers and ends its lock session. */
  stop(): Promise<void>;
}

const RECONNECT_MS = 1_000;

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

export async function startWorkerRecovery(pool: pg.Pool, logger: Logger, options: RecoveryOptions = {}): Promise<WorkerRecovery> {
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const graceMs = options.graceMs ?? 60_000;
  const processKey = randomInt(1, 2 ** 31 - 1);
  const log = logger.child({ component: 'worker-recovery', process_key: processKey });
  let stopped = false;
  let lockClient: pg.Client | null = null;
  let reconnect: NodeJS.Timeout | null = null;
  const pendingInserts = new Set<Promise<unknown>>();

  const lose = (c: pg.Client, err?: Error) => {
    if (lockClient !== c) return;
    lockClient = null;
    c.end().catch(() => {});
    if (stopped) return;
    log.warn({ err: err?.message }, 'the liveness lock connection was lost; taking the lock again');
    const retry = () => {
      reconnect = null;
      if (stopped) return;
      acquire().catch((e) => {
        log.warn({ err: reason(e) }, 'could not take the liveness lock again; retrying');
        reconnect = setTimeout(retry, RECONNECT_MS);
        reconnect.unref();
      });
    };
    reconnect = setTimeout(retry, RECONNECT_MS);
    reconnect.unref();
  };

  const acquire = async () => {
    const c = new pg.Client({ ...pool.options, application_name: 'regwatch worker liveness' });
    c.on('error', (e) => lose(c, e));
    c.on('end', () => lose(c));
    try {
      await c.connect();
      await runConnectHook(pool, c);
      // A machine that vanishes without closing its connection: the server notices in about
      // 90 s instead of the kernel's default two hours (no effect over a Unix socket).
      await c.query('SET tcp_keepalives_idle = 60; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3');
      await c.query('SELECT pg_advisory_lock($1::int, $2::int)', [LIVENESS_LOCK_CLASS, processKey]);
    } catch (e) {
      c.removeAllListeners('end');
      c.on('error', () => {});
      await c.end().catch(() => {});
      throw e;
    }
    lockClient = c;
  };

  await acquire();

  /** One sweep: returns the ids of the dead workers whose jobs were handed back. */
  const sweep = async (): Promise<string[]> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Mark (or clear) when each process was first seen without its lock.
      await client.query(
        `
        WITH state AS (
          SELECT w.worker_id, ${advisoryLockHeldSql('$1::int', 'w.process_key')} AS alive
          FROM job_worker_liveness w
        )
        UPDATE job_worker_liveness w SET dead_since = CASE WHEN s.alive THEN NULL ELSE now() END
        FROM state s
        WHERE s.worker_id = w.worker_id AND s.alive = (w.dead_since IS NOT NULL)`,
        [LIVENESS_LOCK_CLASS],
      );
      const { rows } = await client.query<{ worker_id: string }>(
        `
        DELETE FROM job_worker_liveness
        WHERE dead_since <= now() - make_interval(secs => $1::float8 / 1000)
        RETURNING worker_id`,
        [graceMs],
      );
      const dead = rows.map((r) => r.worker_id);
      if (dead.length > 0) {
        // graphile-worker counts an attempt when it takes a job, so a job whose process died on
        // its last attempt would be unlocked with none left and never run again (a watchlist
        // add's last attempt settles its values: refunds, the mail). The attempt that was cut
        // short is given back, up to MAX_GIVEN_BACK attempts in all so a job that kills its
        // process every time still ends.
        const { rows: spent } = await client.query<{ id: string; attempts: number }>(
          `SELECT id, attempts FROM graphile_worker._private_jobs
           WHERE locked_by = ANY($1::text[]) AND attempts >= max_attempts AND attempts < $2`,
          [dead, MAX_GIVEN_BACK],
        );
        await client.query('SELECT graphile_worker.force_unlock_workers($1::text[])', [dead]);
        for (const job of spent)
          await client.query('SELECT 1 FROM graphile_worker.reschedule_jobs(ARRAY[$1::bigint], max_attempts => $2::int)', [
            job.id,
            job.attempts + 1,
          ]);
      }
      await client.query('COMMIT');
      if (dead.length > 0) log.warn({ workers: dead }, 'handed back the jobs of workers whose process died');
      return dead;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  };

  const sweepLogged = () => {
    if (stopped) return;
    sweep().catch((e) => log.warn({ err: reason(e) }, 'the dead-worker sweep failed'));
  };
  const timer = setInterval(sweepLogged, sweepIntervalMs);
  timer.unref();
  sweepLogged();

  return {
    register(workerId) {
      const p = pool
        .query(
          `
        INSERT INTO job_worker_liveness (worker_id, process_key) VALUES ($1, $2)
        ON CONFLICT (worker_id) DO UPDATE SET process_key = EXCLUDED.process_key, dead_since = NULL`,
          [workerId, processKey],
        )
        .catch((e) =>
          log.warn(
            { err: reason(e), worker_id: workerId },
            "could not record a worker; its jobs are recovered only after graphile-worker's four hours",
          ),
        )
        .finally(() => pendingInserts.delete(p));
      pendingInserts.add(p);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (reconnect) clearTimeout(reconnect);
      await Promise.all(pendingInserts);
      await pool.query('DELETE FROM job_worker_liveness WHERE process_key = $1', [processKey]).catch(() => {});
      const c = lockClient;
      lockClient = null;
      if (c) {
        c.removeAllListeners('end');
        await c.end().catch(() => {});
      }
    },
  };
}
