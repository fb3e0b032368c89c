import type { ErrorObject } from 'ajv';
import { ValidationError } from '../lib/errors.ts';

const labels: Record<string, string> = {};

/** `identifier_value.3` → `identifier value item 3`, as the error texts name a field. */
export function fieldLabel(field: string): string {
  return labels[field] ?? field.replace(/_/g, ' ').replace(/\.(\d+)$/, ' item $1');
}

/**
 * A union (`anyOf`) fails in every branch, and ajv reports each branch's errors and then the union:
 * a description of 501 characters for `string | null` was "too long", "must be a null" and
 * "invalid", three errors for one problem. Each union's errors become those of the branches whose
 * type the value has (the first such branch: the string branch, "too long"), or the union's one sentence when it has
 * none of their types (a number for `string | null`, a word outside a union of literals), in the
 * place of the union's first error.
 */
function collapseUnions(errors: ErrorObject[]): ErrorObject[] {
  let out = errors;
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    if (!out.includes(union)) continue; // inside a union collapsed already
    const prefix = `${union.schemaPath}/`;
    const ofUnion = (e: ErrorObject) => e === union || e.schemaPath.startsWith(prefix);
    const branches = new Map<string, ErrorObject[]>();
    for (const e of out)
      if (e !== union && e.schemaPath.startsWith(prefix)) {
        const branch = e.schemaPath.slice(prefix.length).split('/')[0]!;
        branches.set(branch, [...(branches.get(branch) ?? []), e]);
      }
    const missesType = (e: ErrorObject) => (e.keyword === 'type' || e.keyword === 'const') && e.instancePath === union.instancePath;
    // The first branch whose type the value has explains it: a query value coerced to a list as
    // well (`scope=<201 characters>` fits `string` and, coerced, `string[]`) is one error, not two.
    const fitting = [...branches.values()].find((list) => !list.some(missesType));
    const keep = fitting ?? [union];
    const at = out.findIndex(ofUnion);
    out = [...out.slice(0, at), ...keep, ...out.slice(at).filter((e) => !ofUnion(e))];
  }
  return out;
}

/**
 * Turns ajv errors into `{field: [text]}` in the style the specification shows (Laravel-like
 * sentences); a list element is keyed by its index, e.g. `identifier_value.3`.
 */
export function validationErrorsFromAjv(ajvErrors: ErrorObject[], context?: string): Record<string, string[]> {
  const errors = collapseUnions(ajvErrors);
  const out: Record<string, string[]> = {};
  const add = (field: string, text: string) => {
    const key = field || (context === 'querystring' ? 'query' : context === 'params' ? 'path' : 'body');
    const list = (out[key] ??= []);
    if (!list.includes(text)) list.push(text);
  };
  for (const e of errors) {
    const path = e.instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required': {
        const field = path ? `${path}.${String(p.missingProperty)}` : String(p.missingProperty);
        add(field, `The ${fieldLabel(field)} field is required.`);
        break;
      }
      case 'additionalProperties':
        add(String(p.additionalProperty), `The ${String(p.additionalProperty)} field is not allowed.`);
        break;
      case 'type': {
        const t = String(p.type);
        const what =
          t === 'integer'
            ? 'an integer'
            : t === 'array'
              ? 'an array'
              : t === 'object'
                ? 'an object'
                : t === 'boolean'
                  ? 'true or false'
                  : `a ${t}`;
        if (!path)
          add(
            '',
            context === 'body'
              ? `The request body must be a JSON ${t === 'object' ? 'object' : t}.`
              : `The ${context ?? 'request'} must be ${what}.`,
          );
        else add(path, `The ${fieldLabel(path)} field must be ${what}.`);
        break;
      }
      case 'minLength':
        add(path, `The ${fieldLabel(path)} field must be at least ${String(p.limit)} character${p.limit === 1 ? '' : 's'}.`);
        break;
      case 'maxLength':
        add(path, `The ${fieldLabel(path)} field must not be greater than ${String(p.limit)} characters.`);
        break;
      case 'minimum':
        add(path, `The ${fieldLabel(path)} field must be at least ${String(p.limit)}.`);
        break;
      case 'maximum':
        add(path, `The ${fieldLabel(path)} field must not be greater than ${String(p.limit)}.`);
        break;
      case 'minItems':
        add(path, `The ${fieldLabel(path)} field must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}.`);
        break;
      case 'maxItems':
        add(path, `The ${fieldLabel(path)} field must not have more than ${String(p.limit)} items.`);
        break;
      case 'enum':
      case 'anyOf':
      // A union of literals fails each literal (`const`) and then the union (`anyOf`): one sentence.
      case 'const':
        add(path, `The selected ${fieldLabel(path)} is invalid.`);
        break;
      case 'uniqueItems':
        add(path, `The ${fieldLabel(path)} field has a duplicate value.`);
        break;
      case 'format':
        if (p.format === 'email') add(path, `The ${fieldLabel(path)} field must be a valid email address.`);
        else if (p.format === 'date') add(path, `The ${fieldLabel(path)} field must be a valid date in the format YYYY-MM-DD.`);
        else add(path, `The ${fieldLabel(path)} field format is invalid.`);
        break;
      case 'pattern':
        add(path, `The ${fieldLabel(path)} field format is invalid.`);
        break;
      default:
        add(path, `The ${fieldLabel(path)} field is invalid.`);
    }
  }
  return out;
}

/**
 * A display name as stored: trimmed, then held to the field's minimum (in characters, as the schema
 * counts them; its maximum, checked on the untrimmed text, already holds), and free of control
 * characters (a line break in an account's name would start a line of the mail that greets it).
 */
export function trimmedName(value: string, field: string, minLength: number): string {
  const name = value.trim();
  const label = fieldLabel(field);
  let problem: string | null = null;
  if ([...name].length < minLength)
    problem = `The ${label} field must be at least ${String(minLength)} characters, not counting spaces at either end.`;
  else if (/\p{Cc}/u.test(name)) problem = `The ${label} field must not contain control characters (line breaks, tabs).`;
  if (problem !== null) throw new ValidationError({ [field]: [problem] });
  return name;
}

/** Field paths in reading order: `queries.2` before `queries.10`, an item before its fields. */
const byPath = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/**
 * A schema's errors with the problems of checks it cannot express (a route's `bodyChecks`), so
 * that a 422 says every problem at once (DECISIONS 7), in reading order. A check's problem with an
 * item the schema already found wrong in one of its fields is left unsaid.
 */
export function withCheckErrors(errors: Record<string, string[]>, more: Record<string, string[]> | undefined): Record<string, string[]> {
  const said = Object.keys(errors);
  const extra = Object.entries(more ?? {}).filter(([k]) => !said.some((s) => s === k || s.startsWith(`${k}.`)));
  if (extra.length === 0) return errors;
  const merged = { ...Object.fromEntries(extra), ...errors };
  return Object.fromEntries(
    Object.keys(merged)
      .sort(byPath)
      .map((k) => [k, merged[k]!]),
  );
}
