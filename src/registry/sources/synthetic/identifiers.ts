import { nipCheckDigit, regon14CheckDigit, regon9CheckDigit } from '../../../lib/identifiers.ts';
import * as words from './data.ts';
import { NEW_INDEX_BASE, SALT } from './constants.ts';
import { permute, pickWeighted, type Rng } from './random.ts';
import { type Tables, tables } from './tables.ts';

/**
 * Identifiers of synthetic companies: NIP, REGON and KRS as keyed permutations of the company index
 * (unique by construction), and bank accounts.
 */

const NIP_DOMAIN = 810_000_000; // 9 × 10^8 nine-digit prefixes starting 1..9, 9 check-valid endings each
/** Each NIP change moves the company to another slice of the NIP domain. */
const NIP_VERSION_STRIDE = 100_000_000;
export const MAX_NIP_VERSION = 7;

export function nipFor(seedHash: number, index: number, version: number): string {
  const k = permute(index + version * NIP_VERSION_STRIDE, NIP_DOMAIN, 30, seedHash ^ SALT.nip);
  const prefix = String(10_000_000 + Math.floor(k / 9));
  let wanted = k % 9;
  // Exactly one ninth digit at most makes the checksum 10 (no NIP); take the wanted-th of the others.
  for (let d = 0; d <= 9; d++) {
    const check = nipCheckDigit(prefix + d);
    if (check === null) continue;
    if (wanted-- === 0) return `${prefix}${d}${check}`;
  }
  throw new Error('unreachable: a NIP prefix always has nine valid endings');
}

export function regonFor(seedHash: number, index: number): string {
  // REGON 000000000 passes the checksum but is never issued, hence 1..10^8-1.
  const body = String(1 + permute(index, 99_999_999, 28, seedHash ^ SALT.regon)).padStart(8, '0');
  return body + regon9CheckDigit(body);
}

export function newBankAccount(rng: Rng): string {
  return bankAccount(rng, tables());
}

export function regon14For(regon9: string, unitNumber: number): string {
  const body = regon9 + String(unitNumber).padStart(4, '0');
  return body + regon14CheckDigit(body);
}

/**
 * KRS numbers: base companies below 2^20 get a permutation of 1..2^20 (KRS numbers in use are
 * up to about 1.2 million); companies registered later get increasing numbers from 1,100,000,
 * and transformations into a KRS form get numbers from 50,000,000. All ranges are disjoint.
 */
export function krsFor(seedHash: number, index: number): string {
  let n: number;
  if (index >= NEW_INDEX_BASE) n = 1_100_000 + (index - NEW_INDEX_BASE);
  else if (index < 1 << 20) n = 1 + permute(index, 1 << 20, 20, seedHash ^ SALT.krs);
  else n = 200_000_000 + index;
  return String(n).padStart(10, '0');
}

export function transformedKrsFor(index: number): string {
  return String(50_000_000 + (index % NEW_INDEX_BASE) + (index >= NEW_INDEX_BASE ? 100_000_000 : 0)).padStart(10, '0');
}

/** NRB: 2 check digits, 8-digit sort code (bank, branch, check digit), 16-digit account. */
export function bankAccount(rng: Rng, tables: Tables): string {
  const bank = Number(words.BANKS[pickWeighted(tables.bankWeights, rng.next())]![0]);
  const sortBody = bank * 10_000 + rng.int(10_000); // seven digits: bank, branch
  // Sort code check digit: weights 3 9 7 1 3 9 7, here applied from the last digit backwards.
  let sum = 0;
  let rest = sortBody;
  for (const weight of SORT_CODE_WEIGHTS_REVERSED) {
    sum += (rest % 10) * weight;
    rest = Math.floor(rest / 10);
  }
  const sortCode = sortBody * 10 + ((10 - (sum % 10)) % 10);
  const high = rng.int(100_000_000);
  const low = rng.int(100_000_000);
  // IBAN check over the BBAN followed by "PL00" as digits (P=25, L=21), mod 97 in exact chunks.
  let rem = sortCode % 97;
  rem = (rem * 100_000_000 + high) % 97;
  rem = (rem * 100_000_000 + low) % 97;
  rem = (rem * 1_000_000 + 252_100) % 97;
  return String(98 - rem).padStart(2, '0') + pad8(sortCode) + pad8(high) + pad8(low);
}

const SORT_CODE_WEIGHTS_REVERSED = [7, 9, 3, 1, 7, 9, 3] as const;

function pad8(n: number): string {
  return String(n).padStart(8, '0');
}
