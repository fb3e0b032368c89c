import type { CompanySnapshot } from '../../model.ts';
import type { RegistrySource } from '../source.ts';
import { MAX_DAYS, NEW_INDEX_BASE, NEW_SLOTS_PER_DAY, SYNTHETIC_DEFAULTS, SYNTHETIC_MAX_SIZE } from './constants.ts';
import { hashString } from './random.ts';
import { parseDay } from './days.ts';
import { changesOn, type Context, formOf, newCompaniesOn, pendingDelayOf, registrationDayOf } from './state.ts';
import { stateAt, toSnapshot } from './snapshot.ts';
import { MAX_BACKFILL_DAYS } from '../backfill.ts';

/**
 * The `synthetic[:SEED]` source: a deterministic, realistic Polish business registry.
 *
 * Company `i` is a pure function of (seed, i): its base state comes from a PRNG keyed by a hash
 * of both, as of `epoch`. The days it changes on after the epoch are a fixed sequence drawn from
 * another PRNG keyed by (seed, i), with geometric gaps (about 0.5 % of companies change a day);
 * a PRNG keyed by (seed, i, day) decides what changes, given the company's state. The state on
 * date D is the base with the changes of the days epoch..D applied in order, so it costs one
 * step per change that happened, not one per day; nothing is stored between calls. Each day also
 * registers a few new companies (indices from NEW_INDEX_BASE up).
 *
 * Identifiers are unique by construction: NIP, REGON and KRS are keyed permutations
 * (Feistel networks) of the company index, so no two companies of one seed share any.
 */

export interface SyntheticSourceOptions {
  /** Any number or string; `7` and `'7'` give the same registry. */
  seed?: number | string;
  /** Companies registered before the epoch (indices 0..size-1). */
  size?: number;
  /** YYYY-MM-DD: the base state's date; changes happen on the days after it. */
  epoch?: string;
}

export interface SyntheticSource extends RegistrySource {
  readonly name: 'synthetic';
  readonly seed: string;
  readonly size: number;
  readonly epoch: string;
  /**
   * The day's changed companies in their state on `date`, then the companies registered that
   * day. Empty on and before the epoch.
   */
  snapshotsForDate(date: string, options?: { signal?: AbortSignal }): AsyncIterable<CompanySnapshot>;
  /**
   * The `size` base companies in their state on `date`; with `includeRegistered`, also every
   * company registered after the epoch up to `date`.
   */
  allSnapshots(date: string, options?: { signal?: AbortSignal; includeRegistered?: boolean }): AsyncIterable<CompanySnapshot>;
  /** One company on `date`; null when index `index` is not registered (yet). */
  snapshotOf(index: number, date: string): CompanySnapshot | null;
}

function normalizeSeed(seed: number | string): string {
  const text = String(seed).trim();
  if (text === '') throw new RangeError('the synthetic seed must not be empty');
  return text;
}

export function createSyntheticSource(options: SyntheticSourceOptions = {}): SyntheticSource {
  const seed = normalizeSeed(options.seed ?? SYNTHETIC_DEFAULTS.seed);
  const size = options.size ?? SYNTHETIC_DEFAULTS.size;
  const epoch = options.epoch ?? SYNTHETIC_DEFAULTS.epoch;
  if (!Number.isInteger(size) || size < 0 || size > SYNTHETIC_MAX_SIZE) {
    throw new RangeError(`synthetic size must be an integer from 0 to ${SYNTHETIC_MAX_SIZE}`);
  }
  const ctx: Context = { seedHash: hashString(seed), size, epochDay: parseDay(epoch) };

  // The registry is simulated for MAX_DAYS days after its epoch; it stands still after them (no
  // changes, the last day's state), as any date, past or future, is a valid day (DECISIONS 1).
  function dayOf(date: string): number {
    return parseDay(date) - ctx.epochDay;
  }
  function stateDayOf(date: string): number {
    return Math.min(dayOf(date), MAX_DAYS - 1);
  }

  async function* snapshotsForDate(date: string, runOptions?: { signal?: AbortSignal }): AsyncGenerator<CompanySnapshot> {
    const day = dayOf(date);
    if (day < 1 || day >= MAX_DAYS) return;
    const signal = runOptions?.signal;
    signal?.throwIfAborted();

    // Base companies: a short walk of each one's change days decides whether it changes today.
    for (let index = 0; index < ctx.size; index++) {
      if ((index & 0xffff) === 0) signal?.throwIfAborted();
      if (!changesOn(ctx, index, 1, day)) continue;
      const s = stateAt(ctx, index, day);
      if (s && s.lastChangeDay === day) yield toSnapshot(s);
    }
    // Companies registered on earlier days: a change today, or a pending start that comes today.
    for (let registered = 1; registered < day; registered++) {
      const count = newCompaniesOn(ctx, registered);
      for (let j = 0; j < count; j++) {
        const index = NEW_INDEX_BASE + registered * NEW_SLOTS_PER_DAY + j;
        const startsToday = day - registered <= 14 && registered + pendingDelayOf(ctx, index, formOf(ctx, index)) === day;
        if (!startsToday && !changesOn(ctx, index, registered + 1, day)) continue;
        const s = stateAt(ctx, index, day);
        if (s && s.lastChangeDay === day) yield toSnapshot(s);
      }
    }
    // Registered today.
    const count = newCompaniesOn(ctx, day);
    for (let j = 0; j < count; j++) yield toSnapshot(stateAt(ctx, NEW_INDEX_BASE + day * NEW_SLOTS_PER_DAY + j, day)!);
  }

  async function* allSnapshots(
    date: string,
    runOptions?: { signal?: AbortSignal; includeRegistered?: boolean },
  ): AsyncGenerator<CompanySnapshot> {
    const day = stateDayOf(date);
    const signal = runOptions?.signal;
    signal?.throwIfAborted();
    for (let index = 0; index < ctx.size; index++) {
      if ((index & 0x3fff) === 0) signal?.throwIfAborted();
      yield toSnapshot(stateAt(ctx, index, day)!);
    }
    if (!runOptions?.includeRegistered) return;
    for (let registered = 1; registered <= day; registered++) {
      const count = newCompaniesOn(ctx, registered);
      for (let j = 0; j < count; j++) yield toSnapshot(stateAt(ctx, NEW_INDEX_BASE + registered * NEW_SLOTS_PER_DAY + j, day)!);
    }
  }

  return {
    name: 'synthetic',
    maxBackfillDays: MAX_BACKFILL_DAYS.synthetic,
    seed,
    size,
    epoch,
    snapshotsForDate,
    allSnapshots,
    snapshotOf(index: number, date: string): CompanySnapshot | null {
      if (!Number.isInteger(index) || index < 0) return null;
      if (
        index < NEW_INDEX_BASE
          ? index >= ctx.size
          : (index - NEW_INDEX_BASE) % NEW_SLOTS_PER_DAY >= newCompaniesOn(ctx, registrationDayOf(index))
      )
        return null;
      const s = stateAt(ctx, index, stateDayOf(date));
      return s ? toSnapshot(s) : null;
    },
  };
}

/** `synthetic` → the default seed; `synthetic:SEED` → SEED; anything else → null. */
export function parseSyntheticSourceSpec(spec: string): { seed: string } | null {
  const trimmed = spec.trim();
  if (trimmed === 'synthetic') return { seed: String(SYNTHETIC_DEFAULTS.seed) };
  if (!trimmed.startsWith('synthetic:')) return null;
  const seed = trimmed.slice('synthetic:'.length).trim();
  return seed === '' ? null : { seed };
}
