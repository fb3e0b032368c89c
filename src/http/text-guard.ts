import type { FastifyInstance } from 'fastify';
import { NotFoundError, ValidationError } from '../lib/errors.ts';
import { routeNotFoundMessage } from './error-handler.ts';
import { fieldLabel } from './validation.ts';

/**
 * Text PostgreSQL cannot hold: a NUL (refused in `text`, and as `\u0000` in `jsonb`) and an unpaired
 * UTF-16 surrogate (a JSON body can carry `"\ud800"`; `jsonb` refuses it, `text` silently stores
 * U+FFFD instead). A surrogate pair (an emoji) is fine. `isWellFormed` (Node 20) is native and
 * several times faster than a regular expression with lookarounds: this runs on every string of
 * every request.
 */
export function isStorableText(s: string): boolean {
  return !s.includes('\u0000') && (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

const isWalkable = (v: unknown): v is object => v !== null && typeof v === 'object' && !ArrayBuffer.isView(v);

/** Whether any string (or object key) in the value is unstorable: the common path, no allocation per field. */
function hasUnstorableText(value: unknown): boolean {
  if (typeof value === 'string') return !isStorableText(value);
  if (!isWalkable(value)) return false;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (Array.isArray(v)) {
      for (const item of v) {
        if (typeof item === 'string') { if (!isStorableText(item)) return true; }
        else if (isWalkable(item)) stack.push(item);
      }
    } else {
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        if (!isStorableText(key)) return true;
        const item = (v as Record<string, unknown>)[key];
        if (typeof item === 'string') { if (!isStorableText(item)) return true; }
        else if (isWalkable(item)) stack.push(item);
      }
    }
  }
  return false;
}

/**
 * The fields of a parsed value (a JSON body, a query or path object) holding text PostgreSQL
 * cannot store, as dotted paths in document order (`name`, `queries.3.city`; '' for the value
 * itself). A bad object key counts against the object holding it. Iterative, so a deeply nested
 * body cannot overflow the stack; typed arrays and buffers (raw bodies) are not walked.
 */
export function unstorableTextFields(value: unknown): string[] {
  if (!hasUnstorableText(value)) return [];
  const found = new Set<string>();
  const queue: [unknown, string][] = [[value, '']];
  for (let i = 0; i < queue.length; i++) {
    const [v, path] = queue[i]!;
    const at = (key: string) => (path === '' ? key : `${path}.${key}`);
    if (typeof v === 'string') {
      if (!isStorableText(v)) found.add(path);
    } else if (Array.isArray(v)) {
      for (let j = 0; j < v.length; j++) queue.push([v[j], at(String(j))]);
    } else if (isWalkable(v)) {
      for (const [key, item] of Object.entries(v)) {
        if (!isStorableText(key)) found.add(path);
        else queue.push([item, at(key)]);
      }
    }
  }
  return [...found];
}

/**
 * One guard in front of every route (docs/api-contract.md, "Text the service refuses"): before
 * schema validation, every string of the path parameters, query and body is checked, so no
 * route, present or future, can hand PostgreSQL text it fails on. A path parameter names no
 * resource then (404, as the route's unknown id would); a query or body field is a 422 on that
 * field. Runs after authentication (preParsing), so a 401 still comes first.
 */
export function installTextGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (unstorableTextFields(request.params).length > 0) {
      done(new NotFoundError(routeNotFoundMessage(request.url)));
      return;
    }
    let errors: Record<string, string[]> | null = null;
    for (const [part, value] of [['query', request.query], ['body', request.body]] as const) {
      for (const path of unstorableTextFields(value)) {
        const field = path || part;
        (errors ??= {})[field] = [`The ${fieldLabel(field)} field must not contain NUL characters or unpaired surrogates.`];
      }
    }
    done(errors ? new ValidationError(errors) : undefined);
  });
}
