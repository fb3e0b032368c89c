import type {
  CompanySnapshot,
  CompanyStatus,
  DatedEntry,
  DateType,
  Identifier,
  IdentifierType,
  LocalUnit,
  Profile,
  SourceName,
} from './model.ts';
import { DATE_TYPES, IDENTIFIER_TYPES } from './model-lists.ts';
import { compareStrings } from './format.ts';
import { isDeletedStatusLabel, isSuspendedStatusLabel } from './diff.ts';

/**
 * The company's state after one source reports it. Every source speaks only for itself: its
 * profile replaces that source's earlier profile and leaves the others alone, so a day's run over
 * several sources (in any order) ends in the same state.
 */

/** Sources whose payload carries the company's persons; the others (BIR, VAT) never report them. */
const PERSON_SOURCES: ReadonlySet<SourceName> = new Set<SourceName>(['krs', 'ceidg', 'synthetic', 'file']);

const EMPTY: CompanySnapshot = { identity: { identifiers: [], company_type: '', country_code: '' }, profiles: [], persons: [] };

export function mergeSnapshots(prev: CompanySnapshot | null, incoming: CompanySnapshot): CompanySnapshot {
  const base = prev ?? EMPTY;

  const identifiers = new Map<IdentifierType, Identifier>();
  for (const id of base.identity.identifiers) if (id.value && !identifiers.has(id.type)) identifiers.set(id.type, id);
  const incomingTypes = new Set<IdentifierType>();
  for (const id of incoming.identity.identifiers) {
    if (!id.value || incomingTypes.has(id.type)) continue;
    incomingTypes.add(id.type);
    identifiers.set(id.type, id);
  }

  const profiles = new Map<SourceName, Profile>();
  for (const p of base.profiles) if (!profiles.has(p.source)) profiles.set(p.source, p);
  const incomingSources = new Set<SourceName>();
  for (const p of incoming.profiles) {
    if (incomingSources.has(p.source)) continue;
    incomingSources.add(p.source);
    profiles.set(p.source, p);
  }

  return canonicalize({
    identity: {
      identifiers: [...identifiers.values()],
      company_type: nonEmpty(incoming.identity.company_type) ?? base.identity.company_type,
      country_code: nonEmpty(incoming.identity.country_code) ?? base.identity.country_code,
    },
    profiles: [...profiles.values()],
    persons: reportsPersons(incoming) ? incoming.persons : base.persons,
  });
}

/**
 * Whether mergeSnapshots(prev, incoming) is `incoming` itself, for an `incoming` that is already
 * canonical (mergeSnapshots(null, x)): nothing of `prev` survives when the incoming snapshot
 * names every identifier type and every source that `prev` has, carries its own company type and
 * country (or `prev` has none), and speaks for the persons (or neither has any). That is the
 * common day of a company reported by one registry; the daily run then reuses the incoming
 * snapshot's JSON and hash instead of merging, serialising and hashing again. A property test
 * checks it against mergeSnapshots.
 */
export function mergeIsIncoming(prev: CompanySnapshot, incoming: CompanySnapshot): boolean {
  const a = prev.identity;
  const b = incoming.identity;
  if (b.company_type === '' && a.company_type !== '') return false;
  if (b.country_code === '' && a.country_code !== '') return false;
  for (const id of a.identifiers) if (id.value && !b.identifiers.some((x) => x.type === id.type)) return false;
  for (const p of prev.profiles) if (!incoming.profiles.some((q) => q.source === p.source)) return false;
  return reportsPersons(incoming) || prev.persons.length === 0;
}

/** Whether the report speaks for the company's persons (else the persons known before stay). */
function reportsPersons(incoming: CompanySnapshot): boolean {
  return incoming.persons.length > 0 || incoming.profiles.some((p) => PERSON_SOURCES.has(p.source));
}

function nonEmpty(s: string | null | undefined): string | null {
  return typeof s === 'string' && s.trim() !== '' ? s : null;
}

function latestDate(dates: readonly DatedEntry[], type: DateType): string | null {
  let latest: string | null = null;
  for (const d of dates) if (d.type === type && d.date && (latest === null || d.date > latest)) latest = d.date;
  return latest;
}

function isProfileDeleted(p: Profile): boolean {
  return latestDate(p.dates, 'deletion') !== null || latestDate(p.dates, 'closure') !== null || isDeletedStatusLabel(p.status);
}

function isProfileSuspended(p: Profile): boolean {
  if (isSuspendedStatusLabel(p.status)) return true;
  const suspended = latestDate(p.dates, 'suspension');
  if (suspended === null) return false;
  const resumed = latestDate(p.dates, 'resumption');
  return resumed === null || suspended > resumed;
}

/**
 * Status (docs/api-contract.md): DELETED once deleted or closed, SUSPENDED while suspended, otherwise ACTIVE. Any
 * one registry saying so is enough, because registries lag each other by days, never lead.
 */
export function deriveStatus(snapshot: CompanySnapshot): CompanyStatus {
  if (snapshot.profiles.some(isProfileDeleted)) return 'DELETED';
  if (snapshot.profiles.some(isProfileSuspended)) return 'SUSPENDED';
  return 'ACTIVE';
}

const PRIMARY_ORDER: readonly IdentifierType[] = ['NIP', 'KRS', 'REGON9'];

/** The identifier the company is shown under: NIP, else KRS, else REGON9. */
export function primaryIdentifier(snapshot: CompanySnapshot): Identifier {
  for (const type of PRIMARY_ORDER) {
    const found = snapshot.identity.identifiers.find((id) => id.type === type && id.value);
    if (found) return { type: found.type, value: found.value };
  }
  throw new Error('A company snapshot needs at least one identifier');
}

// ---------------------------------------------------------------------------------------------
// Canonical order: the same content always serialises to the same JSON, so stored snapshots can be
// compared as text and the diff's in-order fast path almost always applies.

const IDENTIFIER_RANK = new Map(IDENTIFIER_TYPES.map((t, i) => [t, i] as const));
const DATE_RANK = new Map(DATE_TYPES.map((t, i) => [t, i] as const));

function rank(map: ReadonlyMap<string, number>, key: string): number {
  return map.get(key) ?? map.size;
}

/**
 * An order by the given keys, in which elements equal on every key (duplicates differing
 * elsewhere, rare) fall back to a key-order-independent serialisation, so ties are ordered too.
 */
function withTies<T>(compare: (a: T, b: T) => number): (a: T, b: T) => number {
  return (a, b) => compare(a, b) || compareStrings(stableStringify(a), stableStringify(b));
}

function sortedBy<T>(items: readonly T[], order: (a: T, b: T) => number): T[] {
  return sortInPlace([...items], order);
}

/** The order, in place; an array already in order (what sources mostly send) is only checked. */
function sortInPlace<T>(items: T[], order: (a: T, b: T) => number): T[] {
  for (let i = 1; i < items.length; i++) if (order(items[i - 1]!, items[i]!) > 0) return items.sort(order);
  return items;
}

function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'undefined';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort(compareStrings)
    .map((k) => `${JSON.stringify(k)}:${stableStringify(record[k])}`)
    .join(',')}}`;
}

const byDate = withTies(
  (a: DatedEntry, b: DatedEntry) => rank(DATE_RANK, a.type) - rank(DATE_RANK, b.type) || compareStrings(a.date, b.date),
);
const byUnit = withTies((a: LocalUnit, b: LocalUnit) => compareStrings(a.identifier, b.identifier) || compareStrings(a.name, b.name));
const byContact = withTies(
  (a: Profile['contacts'][number], b: Profile['contacts'][number]) => compareStrings(a.type, b.type) || compareStrings(a.value, b.value),
);
// Main activity first: that is also the order people expect to read them in.
const byActivity = withTies(
  (a: Profile['activities'][number], b: Profile['activities'][number]) =>
    Number(b.is_primary) - Number(a.is_primary) || compareStrings(a.code, b.code) || compareStrings(a.name, b.name),
);
const byIdentifier = withTies(
  (a: Identifier, b: Identifier) => rank(IDENTIFIER_RANK, a.type) - rank(IDENTIFIER_RANK, b.type) || compareStrings(a.value, b.value),
);
const byPerson = withTies(
  (a: CompanySnapshot['persons'][number], b: CompanySnapshot['persons'][number]) =>
    compareStrings(a.full_name, b.full_name) || compareStrings(a.role, b.role),
);
const bySource = withTies((a: Profile, b: Profile) => compareStrings(a.source, b.source));

/** Fresh element objects, so the canonical snapshot shares nothing mutable with its input. */
function copies<T extends object>(items: readonly T[] | null | undefined): T[] {
  return (items ?? []).map((item) => ({ ...item }));
}

function canonicalUnit(u: LocalUnit): LocalUnit {
  return { ...u, address: u.address ? { ...u.address } : null, dates: sortedBy(copies(u.dates), byDate) };
}

function canonicalProfile(p: Profile): Profile {
  return {
    ...p,
    address: p.address ? { ...p.address } : null,
    units: sortedBy((p.units ?? []).map(canonicalUnit), byUnit),
    contacts: sortedBy(copies(p.contacts), byContact),
    activities: sortedBy(copies(p.activities), byActivity),
    dates: sortedBy(copies(p.dates), byDate),
    websites: sortedBy(p.websites ?? [], compareStrings),
    vat_status: p.vat_status ?? null,
    bank_accounts: sortedBy(p.bank_accounts ?? [], compareStrings),
  };
}

/** A copy with every array in a deterministic order; the content is unchanged. */
export function canonicalize(snapshot: CompanySnapshot): CompanySnapshot {
  return {
    identity: {
      ...snapshot.identity,
      identifiers: sortedBy(copies(snapshot.identity.identifiers), byIdentifier),
    },
    profiles: sortedBy(snapshot.profiles.map(canonicalProfile), bySource),
    persons: sortedBy(copies(snapshot.persons), byPerson),
  };
}

/**
 * mergeSnapshots(null, snapshot), made by rearranging `snapshot` itself instead of copying it:
 * for a snapshot nothing else holds (a line the file source has just parsed), the copies are
 * pure garbage-collection cost on the load path. The result is the argument, now canonical;
 * `canonicalizeOwned(x)` and `mergeSnapshots(null, x)` serialise to the same JSON (a property
 * test checks it).
 */
export function canonicalizeOwned(snapshot: CompanySnapshot): CompanySnapshot {
  const identity = snapshot.identity;
  // At most a few of each: a scan beats a Set.
  const identifiers: Identifier[] = [];
  for (const id of identity.identifiers) {
    if (!id.value || identifiers.some((x) => x.type === id.type)) continue;
    identifiers.push(id);
  }
  const profiles: Profile[] = [];
  for (const p of snapshot.profiles) {
    if (profiles.some((x) => x.source === p.source)) continue;
    profiles.push(ownedProfile(p));
  }
  const owned: CompanySnapshot = {
    identity: {
      identifiers: sortInPlace(identifiers, byIdentifier),
      company_type: nonEmpty(identity.company_type) ?? EMPTY.identity.company_type,
      country_code: nonEmpty(identity.country_code) ?? EMPTY.identity.country_code,
    },
    profiles: sortInPlace(profiles, bySource),
    persons: sortInPlace(snapshot.persons, byPerson),
  };
  return owned;
}

// Keys are assigned in canonicalProfile's order, so a key the input lacked is added where the spread there adds it.
function ownedProfile(p: Profile): Profile {
  p.address = p.address ? p.address : null;
  const units = p.units ?? [];
  for (const u of units) {
    u.address = u.address ? u.address : null;
    u.dates = sortInPlace(u.dates ?? [], byDate);
  }
  p.units = sortInPlace(units, byUnit);
  p.contacts = sortInPlace(p.contacts ?? [], byContact);
  p.activities = sortInPlace(p.activities ?? [], byActivity);
  p.dates = sortInPlace(p.dates ?? [], byDate);
  p.websites = sortInPlace(p.websites ?? [], compareStrings);
  p.vat_status = p.vat_status ?? null;
  p.bank_accounts = sortInPlace(p.bank_accounts ?? [], compareStrings);
  return p;
}
