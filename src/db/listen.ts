import pg from 'pg';
import { poolOf, runConnectHook, type Db } from './database.ts';

export interface NotificationListener {
  /** True while the connection is LISTENing: a notification sent now will arrive. */
  readonly listening: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ListenerOptions {
  db: Db;
  /** A plain lower-case identifier (it is written into the LISTEN statement). */
  channel: string;
  onNotify(payload: string): void;
  /**
   * `true` each time the listener starts listening (again): what was sent while it was down is
   * lost, so whoever trusts the notifications must start over. `false` the moment the connection
   * is known to be lost.
   */
  onState(listening: boolean): void;
  onError?(e: unknown): void;
  /** How often the connection is probed (a connection can die without a word); default 5 s. */
  pingMs?: number;
  /** The pause before connecting again; default 1 s. */
  retryMs?: number;
}

/**
 * One connection of its own (the pool's settings, outside the pool) LISTENing on a channel, made
 * again whenever it drops. Written here rather than taken from a library (pg-listen) because what
 * matters is the state it reports: a cache that trusts notifications must know at once when it can
 * no longer trust them. A database handle not made by createDatabase never listens.
 */
export function createNotificationListener(options: ListenerOptions): NotificationListener {
  const { channel } = options;
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`channel must be a plain identifier (got "${channel}")`);
  const pingMs = options.pingMs ?? 5000;
  const retryMs = options.retryMs ?? 1000;
  let client: pg.Client | null = null;
  let listening = false;
  let stopped = true;
  let retry: NodeJS.Timeout | null = null;
  let ping: NodeJS.Timeout | null = null;

  const lost = (c: pg.Client, e?: unknown) => {
    if (client !== c) return;
    client = null;
    if (listening) {
      listening = false;
      options.onState(false);
    }
    if (e !== undefined) options.onError?.(e);
    c.end().catch(() => {});
    if (!stopped) {
      retry = setTimeout(() => void connect(), retryMs);
      retry.unref();
    }
  };

  const connect = async () => {
    retry = null;
    const pool = poolOf(options.db);
    if (!pool || stopped) return;
    // Named apart from the pool's connections, so an operator (and a test) can tell it.
    const c = new pg.Client({
      ...pool.options,
      keepAlive: true,
      application_name: `${pool.options.application_name ?? 'regwatch'}:listen`,
    });
    client = c;
    c.on('error', (e) => lost(c, e));
    c.on('end', () => lost(c));
    c.on('notification', (m) => {
      if (client === c && listening && m.channel === channel) options.onNotify(m.payload ?? '');
    });
    try {
      await c.connect();
      await runConnectHook(pool, c);
      await c.query(`LISTEN ${channel}`);
    } catch (e) {
      lost(c, e);
      return;
    }
    if (client !== c) return;
    listening = true;
    options.onState(true);
  };

  const probe = async () => {
    const c = client;
    if (!c || !listening) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        c.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('listener connection did not answer')), pingMs);
        }),
      ]);
    } catch (e) {
      lost(c, e);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    get listening() {
      return listening;
    },
    async start() {
      if (!stopped) return;
      stopped = false;
      ping = setInterval(() => void probe(), pingMs);
      ping.unref();
      await connect();
    },
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      if (ping) clearInterval(ping);
      retry = ping = null;
      const c = client;
      client = null;
      if (listening) {
        listening = false;
        options.onState(false);
      }
      if (c) await c.end().catch(() => {});
    },
  };
}
