import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

interface Pending {
  count: number;
  at: Date;
  ip: string | null;
}

/**
 * Token usage (`usage_count`, `last_used_at`, `last_used_ip`) is counted in memory and written
 * in one batched UPDATE every few seconds, so no request waits on a row lock of its token's row.
 * Reads that show usage call `flush()` first, so a caller sees its own requests counted.
 */
export interface UsageTracker {
  record(tokenId: string, at: Date, ip: string | null): void;
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export function createUsageTracker(db: Db, options: { intervalMs?: number; onError?: (e: unknown) => void } = {}): UsageTracker {
  let pending = new Map<string, Pending>();
  let flushing: Promise<void> = Promise.resolve();

  const doFlush = async () => {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const ids: string[] = [],
      counts: number[] = [],
      ats: Date[] = [],
      ips: (string | null)[] = [];
    for (const [id, p] of batch) {
      ids.push(id);
      counts.push(p.count);
      ats.push(p.at);
      ips.push(p.ip);
    }
    try {
      await sql`
        UPDATE api_tokens t
           SET usage_count = t.usage_count + v.n,
               last_used_at = GREATEST(t.last_used_at, v.at),
               last_used_ip = CASE WHEN t.last_used_at IS NULL OR v.at >= t.last_used_at THEN v.ip ELSE t.last_used_ip END
          FROM unnest(${ids}::bigint[], ${counts}::int[], ${ats}::timestamptz[], ${ips}::text[]) AS v(id, n, at, ip)
         WHERE t.id = v.id`.execute(db);
    } catch (e) {
      // Put the counts back so a passing database hiccup loses nothing.
      for (const [id, p] of batch) {
        const cur = pending.get(id);
        if (cur) {
          cur.count += p.count;
          if (p.at > cur.at) {
            cur.at = p.at;
            cur.ip = p.ip;
          }
        } else pending.set(id, p);
      }
      options.onError?.(e);
    }
  };
  const flush = () => (flushing = flushing.then(doFlush));
  const timer = setInterval(() => void flush(), options.intervalMs ?? 2000);
  timer.unref();

  return {
    record(tokenId, at, ip) {
      const cur = pending.get(tokenId);
      if (cur) {
        cur.count += 1;
        if (at >= cur.at) {
          cur.at = at;
          cur.ip = ip;
        }
      } else {
        pending.set(tokenId, { count: 1, at, ip });
      }
    },
    flush,
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
