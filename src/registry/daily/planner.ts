import type { CompanySnapshot, CompanyStatus, DetectedEvent } from '../model.ts';
import { diffSnapshots } from '../diff.ts';
import { mergeIsIncoming, mergeSnapshots } from '../merge.ts';
import { jsonBytesOf, type PreparedItem } from '../prepare.ts';
import type { RegistryExecutor } from '../store/executor.ts';
import {
  allocateCompanyIds,
  lookupCompaniesForBatch,
  type CompanyUpdateRow,
  type IdentifierRow,
  type MatchedCompany,
} from '../store/companies-repo.ts';
import { companyRowFields, statusOfRowFields, type CompanyRowData, type NewCompanyRow } from '../store/company-rows.ts';
import { contentHash } from '../store/content-hash.ts';
import { deriveCompanyColumns, type CompanyColumns } from '../store/search-columns.ts';
import type { Skips } from './skips.ts';
import { createTimeSlices } from '../../lib/event-loop.ts';

/**
 * Plans a batch in memory: each line against its stored company (lookupBatch), merged and diffed,
 * into the rows, identifiers and events writer.ts commits.
 */

export function canonicalOf(item: PreparedItem): CompanySnapshot {
  if (item.canonical !== null) return item.canonical;
  // Decoded for this parse only: cached on the item (jsonOf), the text of each of a batch's
  // 2,000 items lived until the batch committed, and young-generation collections kept copying it.
  return JSON.parse(item.canonicalJson ?? item.jsonBytes!.toString('utf8')) as CompanySnapshot;
}

export interface PlannedUpdate {
  row: CompanyUpdateRow;
  item: PreparedItem;
  events: DetectedEvent[];
  newIdentifiers: IdentifierRow[];
  countsAsUpdated: boolean;
  becameDeleted: boolean;
}

/**
 * The lines planned in the last few batches, by identifier and by company id (`#id`, new companies
 * included), with their stream positions. A retried line (its write lost a race, or its company
 * was claimed by an earlier line of the batch) may come back after a later line of the same
 * company was applied; it is then superseded and dropped, so the last line always wins.
 */
export interface RecentLines {
  supersedes(keys: readonly string[], seq: number): boolean;
  remember(seen: Map<string, number>): void;
}

const RECENT_BATCHES = 4;

export function createRecentLines(): RecentLines {
  const batches: Map<string, number>[] = [];
  return {
    supersedes(keys, seq) {
      for (const batch of batches) {
        for (const key of keys) {
          const later = batch.get(key);
          if (later !== undefined && later > seq) return true;
        }
      }
      return false;
    },
    remember(seen) {
      batches.unshift(seen);
      if (batches.length > RECENT_BATCHES) batches.pop();
    },
  };
}

function lineKeys(item: PreparedItem, companyId: string | null): string[] {
  const keys = item.identifiers.map((x) => `${x.type}:${x.value}`);
  if (companyId !== null) keys.push(`#${companyId}`);
  return keys;
}

export interface BatchPlan {
  newRows: NewCompanyRow[];
  newItems: PreparedItem[];
  newIdentifiers: IdentifierRow[];
  updates: PlannedUpdate[];
  fingerprintOnly: { id: string; fingerprint: string }[];
  unchanged: number;
  skipped: number;
  deferred: PreparedItem[];
  /** Lines planned here (see RecentLines). */
  seen: Map<string, number>;
}

export const MAX_ATTEMPTS = 5;

/** How long planning runs before it lets the event loop (the batch being written) have a turn. */
const PLAN_SLICE_MS = 2;

/**
 * The batch's companies as stored (lookupCompaniesForBatch), or none at all when `assumeNew`:
 * the registry was empty when the run began and lines naming a company already stored have been
 * rare, so the lookup (about a sixth of PostgreSQL's work on a first load) is skipped and every
 * line is taken as a new company. A line that is not (a company named twice in the file, or
 * stored meanwhile by another source's run) loses its identifiers' unique check in writeBatch and
 * is retried with a lookup, exactly as a lost race is. That costs its batch a second identifier
 * insert, so the assumption ends once such lines are more than one in NOT_NEW_TOLERANCE.
 */
export const NOT_NEW_TOLERANCE = 10_000;

export function lookupBatch(
  db: RegistryExecutor,
  sourceName: string,
  items: PreparedItem[],
  assumeNew: boolean,
): Promise<(MatchedCompany | null)[]> {
  if (items.length === 0 || (assumeNew && items.every((item) => item.attempts === 0))) return Promise.resolve(items.map(() => null));
  return lookupCompaniesForBatch(db, sourceName, items);
}

export async function planBatch(
  db: RegistryExecutor,
  date: string,
  items: PreparedItem[],
  matches: (MatchedCompany | null)[],
  skipped: number,
  skips: Skips,
  recent: RecentLines,
): Promise<BatchPlan> {
  const plan: BatchPlan = {
    newRows: [],
    newItems: [],
    newIdentifiers: [],
    updates: [],
    fingerprintOnly: [],
    unchanged: 0,
    skipped,
    deferred: [],
    seen: new Map(),
  };
  const claimed = new Set<string>();
  const fresh: PreparedItem[] = [];
  const slices = createTimeSlices(PLAN_SLICE_MS);
  for (let i = 0; i < items.length; i++) {
    // The batch before this one is being written meanwhile, and each of its statements is sent
    // from this thread once the one before has answered: planning 2,000 changed companies in one
    // go (about 80 ms) held that transaction up for as long (docs/benchmarks.md).
    if (slices.due()) await slices.yield();
    const item = items[i]!;
    const match = matches[i];
    const keys = lineKeys(item, match?.id ?? null);
    // A retried line that found its company is superseded only by a later line of that company;
    // a later line that merely shares an identifier may have gone to another company (NIP wins
    // the match). One that found none, by a later line with any of its identifiers.
    if (item.attempts > 0 && recent.supersedes(match ? [`#${match.id}`] : keys, item.seq)) {
      plan.unchanged++;
      continue;
    }
    // Disjoint identifiers can still name one company (NIP in one line, KRS in another).
    if (match && claimed.has(match.id)) {
      plan.deferred.push(item);
      continue;
    }
    for (const key of keys) plan.seen.set(key, item.seq);
    if (!match) {
      fresh.push(item);
      continue;
    }
    claimed.add(match.id);
    try {
      planExisting(plan, date, item, match);
      skips.succeeded();
    } catch (e) {
      plan.skipped++;
      skips.skip(e, 'snapshot skipped: merging or diffing it failed', { company_id: match.id });
    }
    item.canonical = null;
  }
  if (fresh.length > 0) {
    const ids = await allocateCompanyIds(db, fresh.length);
    fresh.forEach((item, i) => {
      let row: CompanyRowData;
      try {
        if (item.columnsError !== null) throw new Error(item.columnsError);
        row = item.row ?? {
          snapshot: jsonBytesOf(item),
          fields: item.fields ?? companyRowFields(deriveCompanyColumns(canonicalOf(item)), item.fingerprint, item.fingerprint),
        };
        item.canonical = null;
        item.fields = null;
        skips.succeeded();
      } catch (e) {
        plan.skipped++;
        skips.skip(e, 'snapshot skipped: its search columns could not be derived');
        return;
      }
      const id = ids[i]!;
      plan.seen.set(`#${id}`, item.seq);
      plan.newItems.push(item);
      plan.newRows.push({ id, row });
      // The canonical snapshot's identifiers are these (normalised, one per type), in rank order.
      for (const ident of item.identifiers) plan.newIdentifiers.push({ companyId: id, type: ident.type, value: ident.value });
    });
  }
  return plan;
}

function planExisting(plan: BatchPlan, date: string, item: PreparedItem, match: MatchedCompany): void {
  if (match.sameFingerprint || match.snapshotJson === null) {
    plan.unchanged++;
    return;
  }
  // Parsed here, so that the stored snapshot dies young (see PreparedItem.canonical).
  const prev = JSON.parse(match.snapshotJson) as CompanySnapshot;
  match.snapshotJson = null;
  const incoming = canonicalOf(item);
  // Usually nothing of the stored snapshot survives the merge: the incoming one is the result,
  // already serialised and hashed.
  const reuse = mergeIsIncoming(prev, incoming);
  const merged = reuse ? incoming : mergeSnapshots(prev, incoming);
  const json = reuse ? jsonBytesOf(item) : Buffer.from(JSON.stringify(merged), 'utf8');
  // Content hashes in base64, as the lookup returns them; the incoming one is its fingerprint.
  const hash = reuse ? item.fingerprint : contentHash(json).toString('base64');
  if (hash === match.contentHash) {
    plan.fingerprintOnly.push({ id: match.id, fingerprint: item.fingerprint });
    plan.unchanged++;
    return;
  }
  const events = diffSnapshots(prev, merged);
  const { fields, status } = (reuse ? preparedRowFields(item) : null) ?? derivedRowFields(merged, hash, item.fingerprint);
  const known = new Set(prev.identity.identifiers.map((x) => `${x.type}:${x.value}`));
  plan.updates.push({
    item,
    events,
    row: {
      id: match.id,
      revision: match.revision,
      snapshotJson: json,
      fields,
      lastChangedDate: events.length > 0 ? date : null,
    },
    newIdentifiers: merged.identity.identifiers
      .filter((x) => !known.has(`${x.type}:${x.value}`))
      .map((x) => ({ companyId: match.id, type: x.type, value: x.value })),
    // A company counts once a day, and a company first seen today counts as new only.
    countsAsUpdated: events.length > 0 && match.firstSeenDate !== date && match.lastChangedDate !== date,
    becameDeleted: match.status !== 'DELETED' && status === ('DELETED' satisfies CompanyStatus),
  });
}

function derivedRowFields(merged: CompanySnapshot, hash: string, fingerprint: string): { fields: string; status: string } {
  const columns: CompanyColumns = deriveCompanyColumns(merged);
  return { fields: companyRowFields(columns, hash, fingerprint), status: columns.status };
}

/**
 * The row fields prepared with the item (by the file-preparing worker, or ahead on this thread),
 * when the merge is the incoming snapshot itself: they are companyRowFields of that snapshot with
 * its fingerprint as its content hash, exactly what derivedRowFields would build. Null when the
 * item has none.
 */
function preparedRowFields(item: PreparedItem): { fields: string | Buffer; status: string } | null {
  if (item.columnsError !== null) throw new Error(item.columnsError);
  if (item.row !== null) {
    const fields = item.row.subarray(jsonBytesOf(item).length + 1);
    return { fields, status: statusOfRowFields(fields) };
  }
  if (item.fields !== null) return { fields: item.fields, status: statusOfRowFields(item.fields) };
  return null;
}
