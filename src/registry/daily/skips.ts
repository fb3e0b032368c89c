import type { RunDailyOptions } from './options.ts';

type Warn = RunDailyOptions['logger'];

/**
 * A snapshot that makes preparation, merge or derivation throw (a source bug, an odd payload) is
 * skipped and logged: failing the run would fail its every retry on the same snapshot. But when
 * that many in a row fail, the cause is not the data (a missing dictionary, a broken deploy), and
 * the run stops rather than skip a whole registry.
 */
export interface Skips {
  skip(e: unknown, message: string, fields?: object): void;
  succeeded(): void;
}

export const MAX_FAILURES_IN_A_ROW = 100;

export function createSkips(logger: Warn): Skips {
  let inARow = 0;
  return {
    skip(e, message, fields = {}) {
      const reason = e instanceof Error ? e.message : String(e);
      logger?.warn({ ...fields, err: reason }, message);
      if (++inARow >= MAX_FAILURES_IN_A_ROW) throw new Error(`${inARow} snapshots in a row could not be processed; the last: ${reason}`);
    },
    succeeded() {
      inARow = 0;
    },
  };
}
