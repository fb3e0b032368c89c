import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import type { Socket } from 'node:net';
import { promisify } from 'node:util';
import type pg from 'pg';
import type { Logger } from 'pino';

const run = promisify(execFile);

/** Linux's SCHED_IDLE, as /proc/<pid>/stat's `policy` field shows it. */
export const SCHED_IDLE = 5;

/**
 * Puts every thread of process `pid` under SCHED_IDLE with util-linux's `chrt` (threads it starts
 * later inherit the policy). Lowering a process of one's own user to SCHED_IDLE needs no
 * privilege; another user's process needs CAP_SYS_NICE. Rejects with chrt's message.
 */
export async function setIdlePolicy(pid: number, chrt = 'chrt'): Promise<void> {
  try {
    await run(chrt, ['--idle', '--all-tasks', '--pid', '0', String(pid)], { timeout: 10_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(err.code === 'ENOENT' ? `${chrt} not found (util-linux)` : err.stderr?.trim() || err.message, { cause: e });
  }
}

/** The scheduling policy of each thread of `pid` (from /proc; field 41 of stat), by thread id; null when gone. */
export function threadPoliciesOf(pid: number): Map<number, number> | null {
  const policies = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The command name (field 2) may hold spaces and parentheses: fields count from its closing one.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      policies.set(Number(tid), Number(fields[41 - 3]));
    }
  } catch {
    return null;
  }
  return policies;
}

/** A process's title (its cmdline, as a PostgreSQL backend rewrites it), or null when gone. */
function processTitle(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
  } catch {
    return null;
  }
}

const unmapped = (address: string) => address.replace(/^::ffff:(?=\d+\.)/, '');

/** Whether `address` is one of this machine's own (loopback included). */
function isOwnAddress(address: string): boolean {
  const a = unmapped(address);
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => unmapped(i.address) === a));
}

/**
 * The pid of the PostgreSQL backend serving `client`, when it runs on this machine in this process's
 * view of it: the connection is over a Unix socket or to one of this machine's addresses, and
 * /proc/<pid> is a PostgreSQL backend whose title names this very connection (`[local]`, or our
 * end's port). Null otherwise (a server elsewhere, or in another container, where that pid is
 * someone else's or nobody's).
 */
export async function localBackendPid(client: pg.ClientBase): Promise<number | null> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const pid = rows[0]!.pid;
  const stream = (client as unknown as { connection?: { stream?: Partial<Socket> } }).connection?.stream;
  const title = processTitle(pid);
  if (!title?.startsWith('postgres')) return null;
  if (stream?.remoteAddress === undefined) return title.includes('[local]') ? pid : null; // a Unix socket
  if (!isOwnAddress(stream.remoteAddress)) return null;
  return title.includes(`(${stream.localPort})`) ? pid : null;
}

export interface IdlePriority {
  /** Puts this process, every thread of it, under SCHED_IDLE; on failure, one warning. */
  applyToProcess(): Promise<boolean>;
  /**
   * A connection pool's onConnect hook: puts the new connection's backend under SCHED_IDLE when it
   * runs on this machine (localBackendPid). On failure, one warning, and no more tries.
   */
  onConnect(client: pg.ClientBase): Promise<void>;
}

/**
 * SCHED_IDLE for a worker process and its database sessions (WORKER_IDLE_PRIORITY,
 * docs/deployment.md): they take a core only when nothing else wants it, so the delivery of
 * webhooks yields to the daily run at once (nice 19 does not: a niced task still finishes its
 * time slice). Nothing here stops the process: a failure is logged once and the work goes on at
 * normal priority.
 */
export function createIdlePriority(deps: { logger: Logger; chrt?: string; pid?: number }): IdlePriority {
  const log = deps.logger.child({ component: 'idle-priority' });
  const chrt = deps.chrt ?? 'chrt';
  /** Set by the first failure on a backend: no more tries (the next one would fail alike). */
  let backendsFailed = false;
  const gaveUp = () => backendsFailed;
  let toldRemote = false;
  return {
    async applyToProcess() {
      const pid = deps.pid ?? process.pid;
      try {
        await setIdlePolicy(pid, chrt);
        log.info({ pid }, 'worker process under SCHED_IDLE');
        return true;
      } catch (e) {
        log.warn({ err: (e as Error).message }, 'could not put the worker process under SCHED_IDLE; it runs at normal priority');
        return false;
      }
    },
    async onConnect(client) {
      if (gaveUp()) return;
      let pid: number | null;
      try {
        pid = await localBackendPid(client);
      } catch (e) {
        // The connection is unusable: the pool's caller meets the same error on its query.
        log.debug({ err: (e as Error).message }, 'could not ask the backend its pid');
        return;
      }
      if (pid === null) {
        if (!toldRemote) log.info('the database backends are not on this machine (or not visible to it): they keep their priority');
        toldRemote = true;
        return;
      }
      try {
        await setIdlePolicy(pid, chrt);
      } catch (e) {
        // Connections made at once fail at once: one warning all the same.
        if (gaveUp()) return;
        backendsFailed = true;
        log.warn(
          { err: (e as Error).message, backend_pid: pid },
          "could not put a PostgreSQL backend under SCHED_IDLE (run the worker as the database server's user, or give it CAP_SYS_NICE); the backends run at normal priority",
        );
      }
    },
  };
}
