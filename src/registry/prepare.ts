import type { CompanySnapshot, Identifier } from './model.ts';
import { parseIdentifier } from '../lib/identifiers.ts';
import { canonicalizeOwned, mergeSnapshots } from './merge.ts';
import { companyRowFields } from './store/company-rows.ts';
import { contentHash } from './store/content-hash.ts';
import { deriveCompanyColumns } from './store/search-columns.ts';

/**
 * Step 1 of a daily run's batch (docs/registry.md): a source's snapshot made ready before its
 * batch meets the database. Pure, so it runs on the main thread or in the file-preparing worker
 * (prepare-worker.ts) alike.
 */

/** A snapshot made ready before its batch meets the database. */
export interface PreparedItem {
  identifiers: Identifier[];
  /**
   * mergeSnapshots(null, incoming): what a new company stores, what the fingerprint hashes, and
   * what is merged into a known company (merging it is merging the incoming snapshot: same
   * content, canonical order). Set by prepareSnapshot; the daily run lets it go as soon as the
   * item is prepared (daily.ts preparedInProcess) and parses canonicalJson again when it plans the
   * batch: objects that outlive a few young-generation collections are what makes garbage
   * collection expensive here. Null when the item was prepared in the worker.
   */
  canonical: CompanySnapshot | null;
  /** JSON.stringify(canonical) once decoded from jsonBytes (jsonOf); null until then. */
  canonicalJson: string | null;
  /** The canonical JSON's UTF-8 bytes: what its fingerprint hashed and what a write sends (jsonBytesOf). */
  jsonBytes: Buffer | null;
  /** Base64 of the canonical JSON's content hash (store.ts contentHash). */
  fingerprint: string;
  /**
   * The rest of a new company's row (store.ts companyRowFields: search columns, hash,
   * fingerprint), when derived ahead on this thread. `columnsError` when deriving them threw.
   */
  fields: string | null;
  /**
   * A new company's whole row (store.ts companyRow: the canonical JSON and companyRowFields) as
   * the UTF-8 bytes PostgreSQL receives, when the worker built it: then this thread neither
   * copies nor encodes it again.
   */
  row: Buffer | null;
  columnsError: string | null;
  attempts: number;
  /** Position in the source's stream (from 1): between two lines of one company, the later wins. */
  seq: number;
}

/** Stored identifier forms; invalid values are dropped (a source may send a placeholder). */
export function normalizeIdentifiers(identifiers: unknown): Identifier[] {
  if (!Array.isArray(identifiers)) return [];
  const out: Identifier[] = [];
  for (const id of identifiers as Identifier[]) {
    if (!id || (id.type !== 'NIP' && id.type !== 'REGON9' && id.type !== 'KRS') || typeof id.value !== 'string') continue;
    const parsed = parseIdentifier(id.type, id.value);
    if (!parsed.ok || out.some((x) => x.type === id.type)) continue;
    out.push({ type: id.type, value: parsed.value });
  }
  return out;
}

function sameIdentifiers(a: readonly Identifier[], b: readonly Identifier[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]!.type !== b[i]!.type || a[i]!.value !== b[i]!.value) return false;
  return true;
}

/**
 * `owned`: nothing else holds `raw` (a line the file source has just parsed), so it is made
 * canonical in place (canonicalizeOwned) instead of copied: same result, less garbage.
 */
export function prepareSnapshot(raw: CompanySnapshot, owned = false): PreparedItem | null {
  const prepared = prepareCanonical(raw, owned);
  return prepared === null ? null : itemOf(prepared);
}

function itemOf({ identifiers, canonical, canonicalJson }: Canonical): PreparedItem {
  // Encoded once: the hash reads these bytes and the batch's write copies them (jsonBytesOf), where
  // hashing the text and writing it encoded it twice more and measured its UTF-8 length once.
  const jsonBytes = Buffer.from(canonicalJson, 'utf8');
  const fingerprint = contentHash(jsonBytes).toString('base64');
  return {
    identifiers,
    canonical,
    // The text is let go: decoded again from the bytes when planning needs it (jsonOf), it dies
    // young instead of surviving with its batch (see `canonical`).
    canonicalJson: null,
    jsonBytes,
    fingerprint,
    fields: null,
    row: null,
    columnsError: null,
    attempts: 0,
    seq: 0,
  };
}

/** A snapshot in canonical order, with its stored identifiers and its JSON. */
export interface Canonical {
  identifiers: Identifier[];
  canonical: CompanySnapshot;
  canonicalJson: string;
}

/** prepareSnapshot up to the canonical JSON (the worker hashes the JSON's bytes instead of its text). */
export function prepareCanonical(raw: CompanySnapshot, owned = false): Canonical | null {
  if (!raw || typeof raw !== 'object' || !raw.identity || !Array.isArray(raw.profiles)) return null;
  const identifiers = normalizeIdentifiers(raw.identity.identifiers);
  if (identifiers.length === 0) return null;
  // Sources already hand over stored forms as a rule; a copy is made only when something differs.
  const incoming: CompanySnapshot =
    sameIdentifiers(raw.identity.identifiers, identifiers) && Array.isArray(raw.persons)
      ? raw
      : { identity: { ...raw.identity, identifiers }, profiles: raw.profiles, persons: Array.isArray(raw.persons) ? raw.persons : [] };
  const canonical = owned ? canonicalizeOwned(incoming) : mergeSnapshots(null, incoming);
  return { identifiers, canonical, canonicalJson: JSON.stringify(canonical) };
}

/** The item's canonical JSON as text (decoded once from the worker's bytes when needed). */
export function jsonOf(item: PreparedItem): string {
  return (item.canonicalJson ??= item.jsonBytes!.toString('utf8'));
}

/** The item's canonical JSON as UTF-8 bytes, for a write (encoded here only if the item has none). */
export function jsonBytesOf(item: PreparedItem): Buffer {
  return (item.jsonBytes ??= Buffer.from(jsonOf(item), 'utf8'));
}

/** What one snapshot of a stream became: an item, or a skip (with the error when preparing threw). */
export type PreparedEntry = PreparedItem | { skipped: true; error: unknown };

export function isSkip(entry: { skipped: true; error: unknown } | object): entry is { skipped: true; error: unknown } {
  return (entry as { skipped?: boolean }).skipped === true;
}

/** prepareCanonical, never throwing: a snapshot that cannot be prepared is a skip. */
export function canonicalEntry(raw: CompanySnapshot, owned: boolean): Canonical | { skipped: true; error: unknown } {
  try {
    return prepareCanonical(raw, owned) ?? { skipped: true, error: null };
  } catch (e) {
    return { skipped: true, error: e };
  }
}

/**
 * A new company's row fields (companyRowFields) derived ahead, or why deriving them threw. Its
 * content hash is its fingerprint: both hash the canonical JSON.
 */
export function newRowFields(
  canonical: CompanySnapshot,
  fingerprint: string,
): { fields: string; error: null } | { fields: null; error: string } {
  try {
    return { fields: companyRowFields(deriveCompanyColumns(canonical), fingerprint, fingerprint), error: null };
  } catch (e) {
    return { fields: null, error: e instanceof Error ? e.message : String(e) };
  }
}

/** prepareSnapshot, never throwing; `withColumns` also derives the row's other fields ahead. */
export function prepareEntry(raw: CompanySnapshot, withColumns: boolean, owned = false): PreparedEntry {
  const prepared = canonicalEntry(raw, owned);
  if (isSkip(prepared)) return prepared;
  const item = itemOf(prepared);
  if (withColumns) {
    const derived = newRowFields(prepared.canonical, item.fingerprint);
    item.fields = derived.fields;
    item.columnsError = derived.error;
  }
  return item;
}
