import { UINT32 } from './constants.ts';

/**
 * Hashing and randomness of the synthetic registry: 32-bit hashes, the PRNG, weighted picks and
 * keyed permutations.
 */

/** A 32-bit avalanche mix (lowbias32); a bijection, so distinct inputs never collide. */
function mix(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

export function hash2(a: number, b: number): number {
  return mix((mix(a) ^ b) + 0x9e3779b9);
}

export function hash3(a: number, b: number, c: number): number {
  return mix((hash2(a, b) ^ c) + 0x7f4a7c15);
}

export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h >>> 0);
}

/**
 * mulberry32: small, fast, good enough for test data. A class rather than closures because one is
 * made per company and per change, and per-instance closures cost more than the generation itself.
 */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed | 0;
  }
  next(): number {
    const a = (this.state = (this.state + 0x6d2b79f5) | 0);
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / UINT32;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

export function createRng(seed: number): Rng {
  return new Rng(seed);
}

/** Index into cumulative weights. */
export function pickWeighted(cumulative: Float64Array, u: number): number {
  const target = u * cumulative[cumulative.length - 1]!;
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid]! > target) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export function cumulativeOf(weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length);
  let sum = 0;
  for (let i = 0; i < weights.length; i++) out[i] = sum += weights[i]!;
  return out;
}

/** A keyed bijection on [0, 2^bits) (bits even), by a four-round Feistel network. */
function feistel(x: number, bits: number, key: number): number {
  const half = bits >>> 1;
  const mask = (1 << half) - 1;
  let left = x >>> half;
  let right = x & mask;
  for (let round = 0; round < 4; round++) {
    const f = hash2(key + round, right) & mask;
    const next = left ^ f;
    left = right;
    right = next;
  }
  return left * (1 << half) + right;
}

/** A keyed bijection on [0, domain), by cycle-walking the Feistel network. */
export function permute(x: number, domain: number, bits: number, key: number): number {
  let y = x;
  do y = feistel(y, bits, key);
  while (y >= domain);
  return y;
}
