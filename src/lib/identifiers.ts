import type { IdentifierType } from '../registry/model.ts';

/**
 * Polish registry identifiers: NIP (tax number), REGON (9-digit entity / 14-digit local unit
 * statistical number) and KRS (court register number). Validation: docs/api-contract.md, "Identifiers".
 */

export type ParseResult = { ok: true; value: string } | { ok: false; error: string };

const NIP_WEIGHTS = [6, 5, 7, 2, 3, 4, 5, 6, 7] as const;
const REGON9_WEIGHTS = [8, 9, 2, 3, 4, 5, 6, 7] as const;
const REGON14_WEIGHTS = [2, 4, 8, 5, 0, 9, 7, 3, 6, 1, 2, 4, 8] as const;

const DIGITS_ONLY = /^[0-9]+$/;
const ALL_ZEROS = /^0+$/;
// Separators people paste between digit groups: any whitespace (incl. NBSP) and dash-like characters.
const SEPARATORS = /[\s\-\u2010-\u2015]+/g;
const NIP_COUNTRY_PREFIX = /^PL\s*/i;

export const IDENTIFIER_ERRORS: Readonly<Record<IdentifierType, string>> = {
  NIP: 'The NIP must be 10 digits with a valid checksum.',
  REGON9: 'The REGON9 must be 9 digits with a valid checksum.',
  KRS: 'The KRS must be 1 to 10 digits and not all zeros.',
};

function weightedSum(digits: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += (digits.charCodeAt(i) - 48) * weights[i]!;
  return sum;
}

function hasDigitCount(digits: string, count: number): boolean {
  return digits.length === count && DIGITS_ONLY.test(digits);
}

/** The 10th NIP digit for the first nine, or null when the sum gives 10 (no NIP can start so). */
export function nipCheckDigit(first9: string): number | null {
  if (!hasDigitCount(first9, 9)) throw new RangeError('nipCheckDigit needs exactly 9 digits');
  const check = weightedSum(first9, NIP_WEIGHTS) % 11;
  return check === 10 ? null : check;
}

export function regon9CheckDigit(first8: string): number {
  if (!hasDigitCount(first8, 8)) throw new RangeError('regon9CheckDigit needs exactly 8 digits');
  return (weightedSum(first8, REGON9_WEIGHTS) % 11) % 10;
}

export function regon14CheckDigit(first13: string): number {
  if (!hasDigitCount(first13, 13)) throw new RangeError('regon14CheckDigit needs exactly 13 digits');
  return (weightedSum(first13, REGON14_WEIGHTS) % 11) % 10;
}

/**
 * All-zero numbers pass every checksum arithmetically but are never issued; treating them as
 * valid would let placeholders such as `0000000000` from registry payloads match each other.
 */
export function isValidNip(digits: string): boolean {
  if (!hasDigitCount(digits, 10) || ALL_ZEROS.test(digits)) return false;
  return nipCheckDigit(digits.slice(0, 9)) === digits.charCodeAt(9) - 48;
}

export function isValidRegon9(digits: string): boolean {
  if (!hasDigitCount(digits, 9) || ALL_ZEROS.test(digits)) return false;
  return regon9CheckDigit(digits.slice(0, 8)) === digits.charCodeAt(8) - 48;
}

/** A local unit's REGON: its own checksum, and its first nine digits are the parent's REGON9. */
export function isValidRegon14(digits: string): boolean {
  if (!hasDigitCount(digits, 14) || !isValidRegon9(digits.slice(0, 9))) return false;
  return regon14CheckDigit(digits.slice(0, 13)) === digits.charCodeAt(13) - 48;
}

/** KRS numbers are printed with or without leading zeros; storage always has ten digits. */
export function normalizeKrs(raw: string): string | null {
  const digits = raw.trim().replace(SEPARATORS, '');
  if (digits.length < 1 || digits.length > 10 || !DIGITS_ONLY.test(digits) || ALL_ZEROS.test(digits)) return null;
  return digits.padStart(10, '0');
}

/** `PL 526-104-08-28`, `pl5261040828`, `526 104 08 28` all become `5261040828` (not yet validated). */
export function stripNipFormatting(raw: string): string {
  return raw.trim().replace(NIP_COUNTRY_PREFIX, '').replace(SEPARATORS, '');
}

/** Without the separators people paste between digit groups (whitespace, any dash-like character). */
export function stripFormatting(raw: string): string {
  return raw.trim().replace(SEPARATORS, '');
}

/** Validates and normalises a user-supplied identifier; the error text is fit to show the user. */
export function parseIdentifier(type: IdentifierType, raw: string): ParseResult {
  const fail: ParseResult = { ok: false, error: IDENTIFIER_ERRORS[type] };
  if (typeof raw !== 'string') return fail;
  switch (type) {
    case 'NIP': {
      const digits = stripNipFormatting(raw);
      return isValidNip(digits) ? { ok: true, value: digits } : fail;
    }
    case 'REGON9': {
      const digits = stripFormatting(raw);
      return isValidRegon9(digits) ? { ok: true, value: digits } : fail;
    }
    case 'KRS': {
      const value = normalizeKrs(raw);
      return value === null ? fail : { ok: true, value };
    }
    default:
      return { ok: false, error: `Unknown identifier type ${String(type)}.` };
  }
}

/**
 * Best guess for a bare number of unknown type. A valid NIP wins over KRS for ten digits and a
 * valid REGON9 over KRS for nine, because a KRS that long does not exist yet (they are about
 * seven significant digits today); anything else short enough is read as KRS.
 */
export function detectIdentifierType(raw: string): IdentifierType | null {
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  if (NIP_COUNTRY_PREFIX.test(trimmed)) return isValidNip(stripNipFormatting(trimmed)) ? 'NIP' : null;
  const digits = stripFormatting(trimmed);
  if (!DIGITS_ONLY.test(digits)) return null;
  if (digits.length === 10 && isValidNip(digits)) return 'NIP';
  if (digits.length === 9 && isValidRegon9(digits)) return 'REGON9';
  return normalizeKrs(digits) === null ? null : 'KRS';
}

const KEY_CODES: Readonly<Record<IdentifierType, number>> = { NIP: 1, REGON9: 2, KRS: 3 };
const KEY_DIGITS: Readonly<Record<IdentifierType, number>> = { NIP: 10, REGON9: 9, KRS: 10 };

/**
 * The key an identifier is stored under in `company_identifiers`: the type's code times 10^10
 * plus the value's digits (NIP 1, REGON9 2, KRS 3), as decimal text. SQL computes the same with
 * `identifier_key(type, value)` and reads it back with `identifier_type(key)` and
 * `identifier_value(key)` (migration 20261122000500_identifier_keys). Null for a value that is
 * not a stored form (parseIdentifier's output), which names no company.
 */
export function identifierKey(type: IdentifierType, value: string): string | null {
  const code = KEY_CODES[type];
  if (code === undefined || value.length !== KEY_DIGITS[type] || !DIGITS_ONLY.test(value)) return null;
  // At most 3 * 10^10 + 10^10 - 1, exact as a double.
  return String(code * 1e10 + Number(value));
}

/** identifierKey for a stored form, which always has one. */
export function storedIdentifierKey(type: IdentifierType, value: string): string {
  const key = identifierKey(type, value);
  if (key === null) throw new Error(`not a stored ${type}: ${JSON.stringify(value)}`);
  return key;
}
