/** The synthetic registry's sizes, rates and hash salts. */

export const SYNTHETIC_DEFAULTS = Object.freeze({ seed: 1, size: 10_000, epoch: '2026-01-01' });
export const SYNTHETIC_MAX_SIZE = 10_000_000;

/** Companies registered after the epoch: index = NEW_INDEX_BASE + day * NEW_SLOTS_PER_DAY + j. */
export const NEW_INDEX_BASE = 50_000_000;
export const NEW_SLOTS_PER_DAY = 1024;
export const MAX_DAYS = 36_500;
/** New registrations a day, as a share of `size` (CEIDG + KRS: ~0.03 % of live entities a day). */
export const NEW_PER_DAY_SHARE = 0.0003;
/** Sole traders registered with a future start date wait in this status until it comes. */
export const PENDING_SHARE = 0.25;

export const UINT32 = 4_294_967_296;
// A company's daily chance of a change depends on its starting condition: companies in
// proceedings or suspended have an end to reach, so they move faster than active ones.
// Stored as log(1 - p), the step of the geometric gaps between a company's change days.
export const LOG_KEEP_ACTIVE = Math.log(1 - 0.0042);
export const LOG_KEEP_SUSPENDED = Math.log(1 - 0.012);
export const LOG_KEEP_PROCEEDINGS = Math.log(1 - 0.03);

export const SALT = {
  form: 0x1b873593,
  condition: 0x2f4a9c71,
  base: 0x68e31da4,
  change: 0x5bd1e995,
  kind: 0x7a4f6c2d,
  newCount: 0x3c6ef372,
  pending: 0x0b4611a6,
  nip: 0x6d2b79f5,
  regon: 0x4cf5ad43,
  krs: 0x2545f491,
} as const;
