/**
 * The model's value lists (model.ts types and schemas derive from them), apart from model.ts so
 * that code needing only these lists does not load TypeBox: the file-preparing worker
 * (prepare-worker.ts) started about 0.4 s later with it, on every run it serves.
 */

export const IDENTIFIER_TYPES = ['NIP', 'REGON9', 'KRS'] as const;

export const SOURCE_NAMES = ['krs', 'bir', 'ceidg', 'vat', 'synthetic', 'file'] as const;

export const DATE_TYPES = [
  'registration',
  'activity_start',
  'suspension',
  'resumption',
  'closure',
  'deletion',
  'bankruptcy_start',
  'bankruptcy_end',
  'liquidation_start',
  'liquidation_end',
  'restructuring_start',
  'restructuring_end',
] as const;

export const CONTACT_TYPES = ['phone', 'email', 'fax'] as const;
