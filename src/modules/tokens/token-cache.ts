import type { Db } from '../../db/database.ts';
import { createNotificationListener } from '../../db/listen.ts';
import type { Principal } from './authenticate.ts';

/** The channel the trigger of migration 20261125000400_auth_notify speaks on. */
export const AUTH_CHANNEL = 'regwatch_auth';

export interface TokenCache {
  /** True while entries are trusted: the process is listening for changes. */
  readonly active: boolean;
  /** The principal of a secret's hash, when cached, trusted and not expired by `now`. */
  get(secretHash: string, now: Date): Principal | null;
  /** Taken before a lookup: the lookup's answer is cached only if nothing changed meanwhile. */
  ticket(): number;
  put(ticket: number, secretHash: string, principal: Principal): void;
  /** Forgets one token's or one account's entries (what a notification does). */
  forget(payload: string): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Entry {
  principal: Principal;
  storedAt: number;
}

/**
 * The tokens this process has looked up, so that a priced request does not pay a database round
 * trip to know who it is. Trusted only while a LISTEN connection is up: every change to a token or
 * an account is notified by a trigger (migration 20261125000400_auth_notify) and drops the
 * entries concerned; while the connection is down, and until it listens again, nothing is served
 * from the cache and it starts empty. A lookup that raced a notification is not cached (tickets).
 * Entries also expire after `ttlMs`, and the charge of a priced request re-checks the token in
 * its own statement (src/modules/wallet/ledger.ts), so a revocation is honoured at once even
 * before its notification arrives.
 */
export function createTokenCache(deps: { db: Db; maxEntries: number; ttlMs?: number; onError?: (e: unknown) => void }): TokenCache {
  const ttlMs = deps.ttlMs ?? 60_000;
  const entries = new Map<string, Entry>();
  let generation = 0;
  let active = false;

  const reset = (trusted: boolean) => {
    generation++;
    entries.clear();
    active = trusted && deps.maxEntries > 0;
  };
  const forget = (payload: string) => {
    generation++;
    const [kind, id] = payload.split(':');
    for (const [hash, e] of entries) {
      if ((kind === 't' && e.principal.tokenId === id) || (kind === 'a' && e.principal.accountId === id) || (kind !== 't' && kind !== 'a'))
        entries.delete(hash);
    }
  };
  const listener = createNotificationListener({
    db: deps.db,
    channel: AUTH_CHANNEL,
    onNotify: forget,
    onState: reset,
    onError: deps.onError,
  });

  return {
    get active() {
      return active;
    },
    get(secretHash, now) {
      if (!active) return null;
      const e = entries.get(secretHash);
      if (!e) return null;
      if (performance.now() - e.storedAt > ttlMs || (e.principal.expiresAt && e.principal.expiresAt <= now)) {
        entries.delete(secretHash);
        return null;
      }
      return e.principal;
    },
    ticket: () => generation,
    put(ticket, secretHash, principal) {
      if (!active || ticket !== generation) return;
      if (entries.size >= deps.maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(secretHash, { principal, storedAt: performance.now() });
    },
    forget,
    async start() {
      if (deps.maxEntries > 0) await listener.start();
    },
    async stop() {
      await listener.stop();
      reset(false);
    },
  };
}
