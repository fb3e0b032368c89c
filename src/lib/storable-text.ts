/**
 * Text PostgreSQL can store. Pure, so the HTTP guard (src/http/text-guard.ts) and callers that
 * take text from elsewhere (an MCP tool's arguments, a job payload) can share it.
 */

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

/**
 * The text with what PostgreSQL cannot hold replaced by U+FFFD (as a UTF-8 decoder does with bytes
 * it cannot read): for text from outside that is kept rather than refused, such as a webhook
 * receiver's answer or an error message quoting one.
 */
export function toStorableText(s: string): string {
  if (isStorableText(s)) return s;
  return (s.replaceAll('\u0000', '\ufffd') as unknown as { toWellFormed(): string }).toWellFormed();
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
        if (typeof item === 'string') {
          if (!isStorableText(item)) return true;
        } else if (isWalkable(item)) stack.push(item);
      }
    } else {
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        if (!isStorableText(key)) return true;
        const item = (v as Record<string, unknown>)[key];
        if (typeof item === 'string') {
          if (!isStorableText(item)) return true;
        } else if (isWalkable(item)) stack.push(item);
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
