import Negotiator from 'negotiator';
/** Minimal server-rendered pages (recovery confirmation, dev checkout): no scripts needed. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · regwatch</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
  h1 { font-size: 1.5rem; }
  .token { font-family: ui-monospace, monospace; background: #f3f3f3; padding: .75rem; word-break: break-all; border-radius: 4px; }
  .warn { color: #8a4b00; }
  .error { color: #b00020; }
  button { font-size: 1rem; padding: .5rem 1.25rem; margin-right: .5rem; cursor: pointer; }
</style>
</head>
<body>
${body}
</body>
</html>`;
}

/**
 * True when the client asked for JSON rather than a page: its `Accept` prefers `application/json`
 * to `text/html` by the header's own weights (`application/json, text/html;q=0.9` is JSON), and a
 * tie, a wildcard or no header is the page. Negotiator (as Express uses) reads the weights.
 */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  // Media-type parameters other than the weight are dropped: Negotiator matches a range with
  // parameters (`application/json; charset=utf-8`) only to an offer with the same ones.
  const ranges = accept
    .split(',')
    .map((range) => {
      const [type = '', ...params] = range.split(';');
      const q = params.map((p) => p.trim()).find((p) => /^q=/i.test(p));
      return q ? `${type.trim()};${q}` : type.trim();
    })
    .join(', ');
  return new Negotiator({ headers: { accept: ranges } }).mediaType(['text/html', 'application/json']) === 'application/json';
}
