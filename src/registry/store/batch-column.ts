import { sql } from 'kysely';

const SEPARATOR_CHARS = /[\x1e\x1f]/;

/**
 * A column of a batch as one text parameter split in SQL (U+001E between values, U+001F for
 * NULL, a leading separator so that a single empty string survives): pg's array literals escape
 * every element with two regular expressions, a measurable share of the load's CPU. A value that
 * itself contains a separator falls back to the ordinary array parameter.
 */
export function column(values: readonly (string | number | boolean | null)[], type: 'text' | 'bigint' | 'int' | 'date' | 'boolean') {
  let text = '';
  for (const v of values) {
    if (v === null || v === undefined) {
      text += '\x1e\x1f';
      continue;
    }
    const s = typeof v === 'boolean' ? (v ? 't' : 'f') : String(v);
    if (SEPARATOR_CHARS.test(s)) return sql`${values}::${sql.raw(type)}[]`;
    text += '\x1e' + s;
  }
  return sql`(string_to_array(${text}, chr(30), chr(31)))[2:]::${sql.raw(type)}[]`;
}
