import type {
  Activity,
  Address,
  CompanySnapshot,
  Contact,
  ContactType,
  DatedEntry,
  DateType,
  DetectedEvent,
  EventType,
  LocalUnit,
  Person,
  Profile,
  Severity,
} from './model.ts';
import { compareStrings, formatAddress, formatPerson, formatUnit, joinSorted } from './format.ts';
import { foldText } from '../lib/text.ts';

/**
 * Change detection: the events between two states of one company (docs/api-contract.md, "Events").
 *
 * Why this is fast enough for the daily run (10,000+ companies a second on one core):
 * - Nearly every company in a day's run is unchanged in nearly every field. Each field is first
 *   compared element by element in the order the arrays already have (`sameSequence`), which
 *   allocates nothing; stored snapshots are canonicalised and sources emit stable orders, so this
 *   fast path decides almost every field. Only a field that differs pays for Maps, Sets and sorting.
 * - The slow path is linear (hash lookups) plus a sort of the few changed values; nothing compares
 *   every element with every other. Profiles are matched by a scan, which is bounded by the six
 *   source names rather than by the data.
 * - The dedupe Set is created with the first event, so an unchanged company costs only the
 *   collector and its empty result array.
 *
 * Policy (documented here because it shapes what users see):
 * - Profiles are compared only with the profile of the same source; a source appearing or
 *   disappearing yields nothing, so a source that lacks a field never invents a change.
 * - A single value (label, date, address, main activity, NIP) that disappears is not a change:
 *   registries drop fields on partial answers far more often than a company loses them. A value
 *   that appears (old null) or changes is. Set-valued fields (activities, e-mails, phones,
 *   websites, bank accounts, units, persons) report removals, because an empty list from the
 *   same source is an answer, not a missing one.
 * - TAX_IDENTITY_CHANGED fires when the snapshot's NIP changes or is first assigned (old null).
 * - CLOSED_DATE uses the profile's `closure` date, or its `deletion` date when it has no closure
 *   date: a registry that only records the deletion (BIR's `dataSkresleniaZRegon`) has closed the
 *   company just the same.
 * - The same change seen in two profiles is one event: dedupe by (type, old, new), first wins.
 */

const EVENT_SEVERITY: Readonly<Record<EventType, Severity>> = {
  COMPANY_NAME_CHANGED: 'info',
  COMPANY_LEGAL_FORM_CHANGED: 'warning',
  COMPANY_TAX_IDENTITY_CHANGED: 'info',
  COMPANY_REGISTERED_ADDRESS_ADDED: 'info',
  COMPANY_REGISTERED_ADDRESS_CHANGED: 'info',
  COMPANY_ACTIVITIES_ADDED: 'info',
  COMPANY_ACTIVITIES_REMOVED: 'info',
  COMPANY_ACTIVITIES_CHANGED: 'info',
  COMPANY_MAIN_ACTIVITY_CHANGED: 'info',
  COMPANY_SUSPENDED_DATE: 'warning',
  COMPANY_RESUMPTION_DATE: 'info',
  COMPANY_CLOSED_DATE: 'critical',
  COMPANY_START_DATE_CHANGE: 'info',
  COMPANY_STATUS_CHANGED: 'info', // critical when the new status is a deleted one, see severityOf
  COMPANY_BANKRUPTCY_STARTED: 'critical',
  COMPANY_BANKRUPTCY_ENDED: 'info',
  COMPANY_LIQUIDATION_STARTED: 'critical',
  COMPANY_LIQUIDATION_ENDED: 'info',
  COMPANY_RESTRUCTURING_STARTED: 'critical',
  COMPANY_RESTRUCTURING_ENDED: 'info',
  COMPANY_EMAIL_CHANGED: 'info',
  COMPANY_PHONE_CHANGED: 'info',
  COMPANY_WEBSITE_CHANGED: 'info',
  COMPANY_UNIT_OPENED: 'info',
  COMPANY_UNIT_CLOSED: 'info',
  COMPANY_PERSON_ADDED: 'warning',
  COMPANY_PERSON_REMOVED: 'warning',
  COMPANY_VAT_STATUS_CHANGED: 'warning',
  COMPANY_BANK_ACCOUNTS_CHANGED: 'warning',
};

// Stems on folded labels: Polish registry statuses inflect (wykreślony/-a/-e), so whole-word
// equality would miss most of them. `\b` keeps `niezamkniety` from reading as closed.
const DELETED_STATUS = /\b(?:wykresl|skresl|zamkni|deleted|closed)/;
const SUSPENDED_STATUS = /\b(?:zawiesz|suspended)/;

/** A registry status label that means the company no longer exists (`wykreślony`, `DELETED`, …). */
export function isDeletedStatusLabel(label: string | null | undefined): boolean {
  return typeof label === 'string' && label !== '' && DELETED_STATUS.test(foldText(label));
}

/** A registry status label that means activity is suspended (`zawieszony`, `SUSPENDED`, …). */
export function isSuspendedStatusLabel(label: string | null | undefined): boolean {
  return typeof label === 'string' && label !== '' && SUSPENDED_STATUS.test(foldText(label));
}

export function severityOf(eventType: EventType, newValue: string | null): Severity {
  if (eventType === 'COMPANY_STATUS_CHANGED') return isDeletedStatusLabel(newValue) ? 'critical' : 'info';
  return EVENT_SEVERITY[eventType];
}

/** Date types that have an event of their own; `closure` is handled with its `deletion` fallback. */
const DATE_EVENTS: ReadonlyArray<readonly [DateType, EventType]> = [
  ['suspension', 'COMPANY_SUSPENDED_DATE'],
  ['resumption', 'COMPANY_RESUMPTION_DATE'],
  ['activity_start', 'COMPANY_START_DATE_CHANGE'],
  ['bankruptcy_start', 'COMPANY_BANKRUPTCY_STARTED'],
  ['bankruptcy_end', 'COMPANY_BANKRUPTCY_ENDED'],
  ['liquidation_start', 'COMPANY_LIQUIDATION_STARTED'],
  ['liquidation_end', 'COMPANY_LIQUIDATION_ENDED'],
  ['restructuring_start', 'COMPANY_RESTRUCTURING_STARTED'],
  ['restructuring_end', 'COMPANY_RESTRUCTURING_ENDED'],
];

const NULL_KEY = '\u0001';

class EventCollector {
  readonly events: DetectedEvent[] = [];
  private seen: Set<string> | null = null;

  add(eventType: EventType, oldValue: string | null, newValue: string | null): void {
    const key = `${eventType}\u0000${oldValue ?? NULL_KEY}\u0000${newValue ?? NULL_KEY}`;
    this.seen ??= new Set();
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.events.push({ event_type: eventType, old_value: oldValue, new_value: newValue, severity: severityOf(eventType, newValue) });
  }

  /** Single values: appearing or changing is an event, disappearing is not (see the policy above). */
  addIfChanged(eventType: EventType, oldValue: string | null, newValue: string | null): void {
    if (newValue !== null && newValue !== oldValue) this.add(eventType, oldValue, newValue);
  }

  /** Set values (already joined): any difference is an event, including becoming empty. */
  addIfDifferent(eventType: EventType, oldValue: string | null, newValue: string | null): void {
    if (newValue !== oldValue) this.add(eventType, oldValue, newValue);
  }
}

export function diffSnapshots(prev: CompanySnapshot, next: CompanySnapshot): DetectedEvent[] {
  const out = new EventCollector();

  out.addIfChanged('COMPANY_TAX_IDENTITY_CHANGED', nipOf(prev), nipOf(next));

  const prevProfiles = prev.profiles ?? [];
  const nextProfiles = next.profiles ?? [];
  for (let i = 0; i < nextProfiles.length; i++) {
    const nextProfile = nextProfiles[i]!;
    if (indexOfSource(nextProfiles, nextProfile.source) !== i) continue; // a repeated source: the first one speaks
    const prevIndex = indexOfSource(prevProfiles, nextProfile.source);
    if (prevIndex >= 0) diffProfiles(prevProfiles[prevIndex]!, nextProfile, out);
  }

  diffPersons(prev.persons ?? [], next.persons ?? [], out);
  return out.events;
}

function indexOfSource(profiles: readonly Profile[], source: string): number {
  for (let i = 0; i < profiles.length; i++) if (profiles[i]!.source === source) return i;
  return -1;
}

function nipOf(snapshot: CompanySnapshot): string | null {
  let nip: string | null = null;
  for (const id of snapshot.identity?.identifiers ?? []) {
    // Several NIP entries should not happen; taking the smallest keeps the result order-independent.
    if (id.type === 'NIP' && id.value && (nip === null || id.value < nip)) nip = id.value;
  }
  return nip;
}

function label(s: string | null | undefined): string | null {
  if (typeof s !== 'string') return null;
  const trimmed = s.trim();
  return trimmed === '' ? null : trimmed;
}

function diffProfiles(prev: Profile, next: Profile, out: EventCollector): void {
  out.addIfChanged('COMPANY_NAME_CHANGED', label(prev.name), label(next.name));
  out.addIfChanged('COMPANY_LEGAL_FORM_CHANGED', label(prev.legal_form), label(next.legal_form));
  // The white list's profile carries its VAT status as its status too (the only status that
  // registry has): its change is COMPANY_VAT_STATUS_CHANGED, not a change of the company's status.
  if (next.source !== 'vat') out.addIfChanged('COMPANY_STATUS_CHANGED', label(prev.status), label(next.status));
  out.addIfChanged('COMPANY_VAT_STATUS_CHANGED', label(prev.vat_status), label(next.vat_status));
  diffAddress(prev.address ?? null, next.address ?? null, out);
  diffActivities(prev.activities ?? [], next.activities ?? [], out);
  diffDates(prev.dates ?? [], next.dates ?? [], out);
  diffContacts(prev.contacts ?? [], next.contacts ?? [], out);
  diffStringSet('COMPANY_WEBSITE_CHANGED', prev.websites ?? [], next.websites ?? [], out);
  diffStringSet('COMPANY_BANK_ACCOUNTS_CHANGED', prev.bank_accounts ?? [], next.bank_accounts ?? [], out);
  diffUnits(prev.units ?? [], next.units ?? [], out);
}

/** Same elements in the same order; the allocation-free fast path for unchanged fields. */
function sameSequence<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i]!, b[i]!)) return false;
  return true;
}

const sameString = (x: string, y: string) => x === y;
const sameDate = (x: DatedEntry, y: DatedEntry) => x.type === y.type && x.date === y.date;
const sameContact = (x: Contact, y: Contact) => x.type === y.type && x.value === y.value;
const sameActivity = (x: Activity, y: Activity) => x.code === y.code && x.name === y.name && x.is_primary === y.is_primary;
const samePerson = (x: Person, y: Person) => x.full_name === y.full_name && x.role === y.role;
const sameUnit = (x: LocalUnit, y: LocalUnit) =>
  x.identifier === y.identifier && x.name === y.name && sameSequence(x.dates ?? [], y.dates ?? [], sameDate);

function sameAddress(a: Address, b: Address): boolean {
  return (
    a.street === b.street &&
    a.building === b.building &&
    a.apartment === b.apartment &&
    a.postal_code === b.postal_code &&
    a.city === b.city
  );
}

function diffAddress(prev: Address | null, next: Address | null, out: EventCollector): void {
  if (prev === next || next === null || (prev !== null && sameAddress(prev, next))) return;
  const oldLine = formatAddress(prev);
  const newLine = formatAddress(next);
  if (newLine === null || newLine === oldLine) return;
  out.add(oldLine === null ? 'COMPANY_REGISTERED_ADDRESS_ADDED' : 'COMPANY_REGISTERED_ADDRESS_CHANGED', oldLine, newLine);
}

function latestDate(dates: readonly DatedEntry[], type: DateType): string | null {
  let latest: string | null = null;
  for (const d of dates) if (d.type === type && d.date && (latest === null || d.date > latest)) latest = d.date;
  return latest;
}

function closureDate(dates: readonly DatedEntry[]): string | null {
  return latestDate(dates, 'closure') ?? latestDate(dates, 'deletion');
}

function diffDates(prev: readonly DatedEntry[], next: readonly DatedEntry[], out: EventCollector): void {
  if (sameSequence(prev, next, sameDate)) return;
  // Ten scans of a list that holds a handful of dates beat building a map for it.
  for (const [type, eventType] of DATE_EVENTS) out.addIfChanged(eventType, latestDate(prev, type), latestDate(next, type));
  out.addIfChanged('COMPANY_CLOSED_DATE', closureDate(prev), closureDate(next));
}

interface ActivityIndex {
  /** code → name; with duplicate codes the smallest name, so the order of the list does not matter. */
  names: Map<string, string>;
  primary: string | null;
}

function indexActivities(activities: readonly Activity[]): ActivityIndex {
  const names = new Map<string, string>();
  let primary: string | null = null;
  for (const a of activities) {
    const code = a.code?.trim();
    if (!code) continue;
    const name = a.name?.trim() ?? '';
    const known = names.get(code);
    if (known === undefined || name < known) names.set(code, name);
    if (a.is_primary && (primary === null || code < primary)) primary = code;
  }
  return { names, primary };
}

function formatActivity(code: string, name: string): string {
  return name === '' ? code : `${code} ${name}`;
}

function diffActivities(prev: readonly Activity[], next: readonly Activity[], out: EventCollector): void {
  if (sameSequence(prev, next, sameActivity)) return;
  const before = indexActivities(prev);
  const after = indexActivities(next);
  const added: string[] = [];
  const changed: string[] = [];
  for (const [code, name] of after.names) {
    const oldName = before.names.get(code);
    if (oldName === undefined) added.push(code);
    else if (oldName !== name) changed.push(code);
  }
  const removed: string[] = [];
  for (const code of before.names.keys()) if (!after.names.has(code)) removed.push(code);

  if (added.length > 0) out.add('COMPANY_ACTIVITIES_ADDED', null, added.sort(compareStrings).join(', '));
  if (removed.length > 0) out.add('COMPANY_ACTIVITIES_REMOVED', removed.sort(compareStrings).join(', '), null);
  for (const code of changed.sort(compareStrings)) {
    out.add('COMPANY_ACTIVITIES_CHANGED', formatActivity(code, before.names.get(code)!), formatActivity(code, after.names.get(code)!));
  }
  out.addIfChanged('COMPANY_MAIN_ACTIVITY_CHANGED', before.primary, after.primary);
}

function* contactValues(contacts: readonly Contact[], type: ContactType): Iterable<string> {
  for (const c of contacts) if (c.type === type) yield c.value;
}

/** E-mail addresses as mailboxes: case is not a change (KRS lower-cases them; other sources need not). */
function mailboxes(contacts: readonly Contact[]): string | null {
  const list: string[] = [];
  for (const value of contactValues(contacts, 'email')) list.push(value.toLowerCase());
  return joinSorted(list);
}

function diffContacts(prev: readonly Contact[], next: readonly Contact[], out: EventCollector): void {
  if (sameSequence(prev, next, sameContact)) return;
  if (mailboxes(prev) !== mailboxes(next))
    out.addIfDifferent('COMPANY_EMAIL_CHANGED', joinSorted(contactValues(prev, 'email')), joinSorted(contactValues(next, 'email')));
  out.addIfDifferent('COMPANY_PHONE_CHANGED', joinSorted(contactValues(prev, 'phone')), joinSorted(contactValues(next, 'phone')));
}

function diffStringSet(eventType: EventType, prev: readonly string[], next: readonly string[], out: EventCollector): void {
  if (sameSequence(prev, next, sameString)) return;
  out.addIfDifferent(eventType, joinSorted(prev), joinSorted(next));
}

function isUnitClosed(unit: LocalUnit): boolean {
  return closureDate(unit.dates ?? []) !== null;
}

/** identifier → the unit's open entry (or, if every entry is closed, null). */
function indexUnits(units: readonly LocalUnit[]): Map<string, LocalUnit | null> {
  const index = new Map<string, LocalUnit | null>();
  for (const unit of units) {
    const id = unit.identifier?.trim();
    if (!id) continue;
    const open = isUnitClosed(unit) ? null : unit;
    if (!index.has(id) || (index.get(id) === null && open !== null)) index.set(id, open);
  }
  return index;
}

function diffUnits(prev: readonly LocalUnit[], next: readonly LocalUnit[], out: EventCollector): void {
  if (sameSequence(prev, next, sameUnit)) return;
  const before = indexUnits(prev);
  const after = indexUnits(next);
  const opened: string[] = [];
  const closed: string[] = [];
  for (const [id, unit] of after) if (unit !== null && !before.get(id)) opened.push(id);
  for (const [id, unit] of before) if (unit !== null && !after.get(id)) closed.push(id);
  for (const id of opened.sort(compareStrings)) out.add('COMPANY_UNIT_OPENED', null, formatUnit(after.get(id)!));
  for (const id of closed.sort(compareStrings)) out.add('COMPANY_UNIT_CLOSED', formatUnit(before.get(id)!), null);
}

function personLabels(persons: readonly Person[]): Set<string> {
  const labels = new Set<string>();
  for (const p of persons) if (p.full_name?.trim()) labels.add(formatPerson(p));
  return labels;
}

/**
 * Persons are company-level: `mergeSnapshots` carries the previous list forward when the
 * reporting source does not cover persons, so a difference here is a real one.
 */
function diffPersons(prev: readonly Person[], next: readonly Person[], out: EventCollector): void {
  if ((prev.length === 0 && next.length === 0) || sameSequence(prev, next, samePerson)) return;
  const before = personLabels(prev);
  const after = personLabels(next);
  const added: string[] = [];
  const removed: string[] = [];
  for (const p of after) if (!before.has(p)) added.push(p);
  for (const p of before) if (!after.has(p)) removed.push(p);
  for (const p of added.sort(compareStrings)) out.add('COMPANY_PERSON_ADDED', null, p);
  for (const p of removed.sort(compareStrings)) out.add('COMPANY_PERSON_REMOVED', p, null);
}
