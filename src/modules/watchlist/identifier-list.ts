import { parseIdentifier } from '../../lib/identifiers.ts';
import { IDENTIFIER_TYPES, type IdentifierType } from '../../registry/model.ts';
import { ValidationError } from '../../lib/errors.ts';

/**
 * The body of POST /companies/add and DELETE /companies/watched (docs/watchlist.md): an identifier
 * type and a list of values, under their names or the aliases `name` / `value`. Every value is
 * checked before anything happens, so one 422 names every invalid one by its index.
 */

export const MAX_IDENTIFIERS = 100;
export const MAX_VALUE_LENGTH = 50;

export interface IdentifierList {
  type: IdentifierType;
  /** Distinct stored forms (NIP bare, KRS padded), in the order first submitted. */
  values: string[];
  /** How many values the body held, duplicates included. */
  submitted: number;
}

const TYPE_FIELDS = ['identifier_type', 'name'] as const;
const VALUE_FIELDS = ['identifier_value', 'value'] as const;

function pick<K extends string>(body: Record<string, unknown>, names: readonly K[]): { field: K; value: unknown } {
  for (const field of names) if (body[field] !== undefined) return { field, value: body[field] };
  return { field: names[0]!, value: undefined };
}

function label(field: string): string {
  return field.replace(/_/g, ' ');
}

/** Parses and validates the body; throws ValidationError (422) listing every problem. */
export function parseIdentifierList(body: unknown): IdentifierList {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError({ body: ['The request body must be a JSON object.'] });
  }
  const b = body as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const fail = (key: string, text: string) => (errors[key] ??= []).push(text);

  // A field and its alias both given must agree: which one counts would otherwise be a guess.
  for (const [field, alias] of [TYPE_FIELDS, VALUE_FIELDS]) {
    if (b[field] !== undefined && b[alias] !== undefined && JSON.stringify(b[field]) !== JSON.stringify(b[alias]))
      fail(alias, `The ${alias} field is an alias of ${field}; give one of them, or both the same.`);
  }

  const t = pick(b, TYPE_FIELDS);
  let type: IdentifierType | null = null;
  if (t.value === undefined || t.value === null || t.value === '') fail(t.field, `The ${label(t.field)} field is required.`);
  else if (typeof t.value !== 'string' || !IDENTIFIER_TYPES.includes(t.value.trim().toUpperCase() as IdentifierType)) {
    fail(t.field, `The selected ${label(t.field)} is invalid. Use one of ${IDENTIFIER_TYPES.join(', ')}.`);
  } else type = t.value.trim().toUpperCase() as IdentifierType;

  const v = pick(b, VALUE_FIELDS);
  let raw: unknown[] = [];
  if (v.value === undefined || v.value === null) fail(v.field, `The ${label(v.field)} field is required.`);
  else if (!Array.isArray(v.value)) fail(v.field, `The ${label(v.field)} field must be an array.`);
  else if (v.value.length === 0) fail(v.field, `The ${label(v.field)} field must have at least 1 item.`);
  else if (v.value.length > MAX_IDENTIFIERS) fail(v.field, `The ${label(v.field)} field must not have more than ${MAX_IDENTIFIERS} items.`);
  else raw = v.value;

  const values: string[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const key = `${v.field}.${i}`;
    if (typeof item !== 'string') return fail(key, `The ${label(v.field)} item ${i} must be a string.`);
    if (item.length > MAX_VALUE_LENGTH)
      return fail(key, `The ${label(v.field)} item ${i} must not be greater than ${MAX_VALUE_LENGTH} characters.`);
    // Without a valid type the values cannot be checked; the type's error says why.
    if (type === null) return;
    const parsed = parseIdentifier(type, item);
    if (!parsed.ok) return fail(key, parsed.error);
    if (!seen.has(parsed.value)) {
      seen.add(parsed.value);
      values.push(parsed.value);
    }
  });

  if (Object.keys(errors).length > 0 || type === null) throw new ValidationError(errors);
  return { type, values, submitted: raw.length };
}
