import { foldText, normalizeActivityCode } from '../../lib/text.ts';
import { pageMeta } from '../../lib/pagination.ts';
import { legalForms, pkdActivities, voivodeships, type PkdEntry, type PkdLevel, type PkdVersion } from '../../registry/dictionaries.ts';

/**
 * The registry dictionaries a client needs to build a search form: legal-form slugs, voivodeships
 * and PKD activity codes. Pure reads of the files shipped in data/dictionaries.
 */

export interface ActivityItem {
  code: string;
  /** As written in registries and PKD: `62.01.Z`. */
  dotted: string;
  name: string;
  level: PkdLevel;
}

/** `6201Z` → `62.01.Z`, `6201` → `62.01`, `620` → `62.0`; sections and divisions stay as they are. */
export function dottedCode(code: string): string {
  if (!/^\d{3,4}[A-Z]?$/.test(code)) return code;
  const cls = `${code.slice(0, 2)}.${code.slice(2, 4)}`;
  return code.length === 5 ? `${cls}.${code[4]}` : cls;
}

export function listLegalForms() {
  return legalForms().map((f) => ({ slug: f.slug, label: f.label, abbreviation: f.abbreviation, register: f.register }));
}

export function listVoivodeships() {
  return voivodeships().map((v) => ({ code: v.code, name: v.name, slug: v.slug }));
}

const foldedNames = new WeakMap<readonly PkdEntry[], string[][]>();

function wordsOfNames(entries: readonly PkdEntry[]): string[][] {
  let words = foldedNames.get(entries);
  if (!words) {
    words = entries.map((e) =>
      foldText(e.name)
        .split(/[^a-z0-9]+/)
        .filter(Boolean),
    );
    foldedNames.set(entries, words);
  }
  return words;
}

export interface ActivityQuery {
  version: PkdVersion;
  level: 'subclass' | 'all';
  prefix: string | null;
  q: string | null;
  page: number;
  perPage: number;
}

/**
 * PKD entries in code order. `prefix`: codes starting with it (dots ignored). `q`: every word
 * starts a word of the name (case and diacritics ignored), or q is the start of the code.
 */
export function listActivities(query: ActivityQuery) {
  const entries = pkdActivities({ version: query.version, level: query.level });
  const words = wordsOfNames(entries);
  const prefix = query.prefix === null ? null : normalizeActivityCode(query.prefix);
  const qWords =
    query.q === null
      ? []
      : foldText(query.q)
          .split(/[^a-z0-9]+/)
          .filter(Boolean);
  const qCode = query.q === null ? null : normalizeActivityCode(query.q);
  const matches: ActivityItem[] = [];
  entries.forEach((e, i) => {
    if (prefix !== null && !e.code.startsWith(prefix)) return;
    if (query.q !== null) {
      const byCode = qCode !== null && qCode !== '' && e.code.startsWith(qCode);
      const byName = qWords.length > 0 && qWords.every((w) => words[i]!.some((nw) => nw.startsWith(w)));
      if (!byCode && !byName) return;
    }
    matches.push({ code: e.code, dotted: dottedCode(e.code), name: e.name, level: e.level });
  });
  const total = matches.length;
  const start = (query.page - 1) * query.perPage;
  return {
    data: matches.slice(start, start + query.perPage),
    meta: pageMeta(total, query.page, query.perPage),
  };
}
