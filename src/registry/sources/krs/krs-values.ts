/**
 * Value helpers for KRS extracts. The full extract (OdpisPelny) stores every attribute as an
 * array of versions (`nrWpisuWprow` introduced it, `nrWpisuWykr` removed it); the current
 * extract (OdpisAktualny) stores plain values. `Versioned` reads both the same way.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

export function str(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return String(value);
  return '';
}

const ENTRY_KEYS = new Set(['nrWpisuWprow', 'nrWpisuWykr']);

function isVersion(value: unknown): value is JsonObject {
  return isObject(value) && 'nrWpisuWprow' in value;
}

function isVersionArray(value: unknown): value is JsonObject[] {
  return Array.isArray(value) && value.length > 0 && value.every(isVersion);
}

export interface Version {
  value: unknown;
  /** Entry number that introduced the value; undefined in a current extract. */
  introducedBy: string | undefined;
  removedBy: string | undefined;
}

/**
 * A version is current when nothing removed it, or when only the deletion entry did: after a
 * deletion KRS closes every version with the deletion entry, and the last state before deletion
 * is what a deleted company's profile should show.
 */
export function isCurrent(version: { removedBy: string | undefined }, deletionEntry: string | undefined): boolean {
  return version.removedBy === undefined || (deletionEntry !== undefined && version.removedBy === deletionEntry);
}

function unwrapVersion(version: JsonObject, key: string): unknown {
  if (key in version) return version[key];
  const rest: JsonObject = {};
  for (const [k, v] of Object.entries(version)) if (!ENTRY_KEYS.has(k)) rest[k] = v;
  return rest;
}

/** Every version of an attribute, in either extract shape. */
export function versionsOf(value: unknown, key: string): Version[] {
  if (isVersionArray(value)) {
    return value.map((v) => ({
      value: unwrapVersion(v, key),
      introducedBy: str(v.nrWpisuWprow) || undefined,
      removedBy: str(v.nrWpisuWykr) || undefined,
    }));
  }
  if (value === undefined || value === null) return [];
  if (Array.isArray(value) && value.length === 0) return [];
  return [{ value, introducedBy: undefined, removedBy: undefined }];
}

function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  return false;
}

/**
 * The current state of a (possibly full-extract) subtree, in the shape of the current extract:
 * version arrays collapse to their current value (a single value, or an array when several
 * versions are current at once), lists of items keep only items that still have content.
 */
export function currentView(value: unknown, key: string, deletionEntry: string | undefined): unknown {
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined;
    if (isVersionArray(value)) {
      const current = versionsOf(value, key)
        .filter((v) => isCurrent(v, deletionEntry))
        .map((v) => currentView(v.value, key, deletionEntry))
        .filter((v) => !isEmptyValue(v));
      if (current.length === 0) return undefined;
      return current.length === 1 ? current[0] : current;
    }
    const items = value.map((item) => currentView(item, key, deletionEntry)).filter((v) => !isEmptyValue(v));
    return items;
  }
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const current = currentView(v, k, deletionEntry);
      if (current !== undefined) out[k] = current as Json;
    }
    return out;
  }
  return value;
}

export function get(obj: unknown, ...path: string[]): unknown {
  let node: unknown = obj;
  for (const key of path) {
    if (!isObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

/** `dd.MM.yyyy` (KRS) to `yyyy-MM-dd`; null when not a real date. */
export function krsDate(value: unknown): string | null {
  const m = /^(\d{2})\.(\d{2})\.(\d{4})/.exec(str(value));
  if (!m) return null;
  return validIsoDate(`${m[3]}-${m[2]}-${m[1]}`);
}

export function validIsoDate(iso: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!m) return null;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) return null;
  return iso;
}

const MONTHS: Record<string, string> = {
  STYCZNIA: '01',
  LUTEGO: '02',
  MARCA: '03',
  KWIETNIA: '04',
  MAJA: '05',
  CZERWCA: '06',
  LIPCA: '07',
  SIERPNIA: '08',
  WRZEŚNIA: '09',
  PAŹDZIERNIKA: '10',
  LISTOPADA: '11',
  GRUDNIA: '12',
};

/**
 * The first date written inside free text (`… Z DNIA 01.12.2005 R.`, `5 SIERPNIA 2025 R.`).
 * KRS often records decision dates only in prose, e.g. a bankruptcy entry without `data`.
 */
export function dateInText(value: unknown): string | null {
  const text = str(value).toUpperCase();
  if (!text) return null;
  const candidates: Array<{ at: number; iso: string | null }> = [];
  const numeric = /(?<!\d)(\d{1,2})\.(\d{1,2})\.(\d{4})(?!\d)/.exec(text);
  if (numeric) {
    candidates.push({
      at: numeric.index,
      iso: validIsoDate(`${numeric[3]}-${numeric[2]!.padStart(2, '0')}-${numeric[1]!.padStart(2, '0')}`),
    });
  }
  const words = new RegExp(`(?<!\\d)(\\d{1,2})\\s+(${Object.keys(MONTHS).join('|')})\\s+(\\d{4})(?!\\d)`, 'u').exec(text);
  if (words) {
    candidates.push({ at: words.index, iso: validIsoDate(`${words[3]}-${MONTHS[words[2]!]}-${words[1]!.padStart(2, '0')}`) });
  }
  const iso = /(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)/.exec(text);
  if (iso) candidates.push({ at: iso.index, iso: validIsoDate(iso[0]) });
  const found = candidates.filter((c) => c.iso !== null).sort((a, b) => a.at - b.at)[0];
  return found?.iso ?? null;
}
