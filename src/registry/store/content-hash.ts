import { hash as oneShotHash } from 'node:crypto';

/** 16 bytes of SHA-256: collisions are out of reach, and it halves the stored size. */
export function contentHash(json: string | Uint8Array): Buffer {
  return oneShotHash('sha256', json, 'buffer').subarray(0, 16);
}
