import type { Kysely } from 'kysely';
import type { Log } from '../logger.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { parseIdentifier } from '../lib/identifiers.ts';
import { runDaily, RunInProgressError } from './daily/run.ts';
import { mergeSnapshots } from './merge.ts';
import type { CompanySnapshot, Identifier, SourceName } from './model.ts';
import { sourceRank } from './sources/display-order.ts';
import type { RegistrySource } from './sources/source.ts';
import { findCompanyIdByIdentifier } from './store/companies-repo.ts';

/**
 * On-demand import (docs/search.md, "On-demand import"): a valid identifier of no known company is looked up in
 * every configured live registry, what they return is merged into one snapshot, and that snapshot
 * is stored by the ordinary daily run (one run of today under the key `import:<sources>:<type>:<value>`),
 * so a company imported on demand is stored, diffed and counted exactly like one a daily run brings.
 * Shared by POST /companies/snapshot and the watchlist's background import.
 */

export interface ImportDeps {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>;
  logger: Log;
  /** The live sources to ask (built once by the composition root; `synthetic` and `file` are skipped). */
  sources: readonly RegistrySource[];
  /** Decides the run's date (today, UTC); default: the system clock. */
  clock?: Clock;
  signal?: AbortSignal;
}

/** The on-demand import as its users (snapshot, feeds, watchlist jobs) need it: make sure a company is known. */
export type ImportCompany = (identifier: Identifier) => Promise<ImportResult>;

/** Binds the on-demand import to the process's database and live sources. */
export function createCompanyImporter(deps: ImportDeps): ImportCompany {
  return (identifier) => importCompany(deps, identifier);
}

export interface ImportResult {
  found: boolean;
  /** The company's id (companies.id) when found. */
  companyId?: string;
}

/**
 * No source knew the identifier, and at least one of them could not be asked (down, timing out,
 * answering garbage): "not found" would be a guess. Callers answer 503 or retry later.
 */
export class ImportUnavailableError extends Error {
  constructor(
    readonly failedSources: readonly string[],
    options?: { cause?: unknown },
  ) {
    super(
      `The registry source${failedSources.length === 1 ? '' : 's'} ${failedSources.join(', ')} could not be asked; the company may exist.`,
      options,
    );
    this.name = 'ImportUnavailableError';
  }
}

/** How long to wait for another process that is importing the same identifier right now. */
const CONCURRENT_IMPORT_WAIT_MS = 30_000;

/** The identifier as stored (NIP bare, KRS padded), or null when it is not valid. */
function storedForm(identifier: Identifier): Identifier | null {
  const parsed = parseIdentifier(identifier.type, identifier.value);
  return parsed.ok ? { type: identifier.type, value: parsed.value } : null;
}

/**
 * A registry's answer about the asked identifier. One that names another value of the same type
 * is about another company and is dropped; one that leaves the asked identifier out gets it.
 */
function aboutIdentifier(snapshot: CompanySnapshot, identifier: Identifier): CompanySnapshot | null {
  const identifiers = snapshot.identity?.identifiers ?? [];
  const sameType = identifiers.filter((x) => x.type === identifier.type).map((x) => storedForm(x)?.value ?? x.value);
  if (sameType.length > 0 && !sameType.includes(identifier.value)) return null;
  if (sameType.length > 0) return snapshot;
  return { ...snapshot, identity: { ...snapshot.identity, identifiers: [...identifiers, identifier] } };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Makes sure the company with this identifier is in the database, importing it from the live
 * sources when it is not. `found: false` when it was not known and no source knows it (or no
 * live source is configured). Throws ImportUnavailableError when no source knew it and one of
 * them failed. Safe to call concurrently for the same identifier: one import runs, the others
 * wait for it.
 */
export async function importCompany(deps: ImportDeps, identifier: Identifier): Promise<ImportResult> {
  const wanted = storedForm(identifier);
  if (!wanted) return { found: false };
  const known = await findCompanyIdByIdentifier(deps.db, wanted);
  if (known) return { found: true, companyId: known };

  const sources = deps.sources.filter((s) => typeof s.lookup === 'function' && s.name !== 'synthetic' && s.name !== 'file');
  if (sources.length === 0) return { found: false };

  const answers = await Promise.allSettled(sources.map((s) => s.lookup!(wanted, { signal: deps.signal })));
  const found: { source: SourceName; snapshot: CompanySnapshot }[] = [];
  const failed: string[] = [];
  answers.forEach((answer, i) => {
    const source = sources[i]!;
    if (answer.status === 'rejected') {
      failed.push(source.name);
      deps.logger.warn(
        { source: source.name, identifier: wanted, err: answer.reason instanceof Error ? answer.reason.message : String(answer.reason) },
        'on-demand import: source lookup failed',
      );
      return;
    }
    if (!answer.value) return;
    const snapshot = aboutIdentifier(answer.value, wanted);
    if (snapshot) found.push({ source: source.name, snapshot });
    else
      deps.logger.warn({ source: source.name, identifier: wanted }, 'on-demand import: the source answered about another company; ignored');
  });
  if (found.length === 0) {
    if (failed.length > 0) throw new ImportUnavailableError(failed);
    return { found: false };
  }

  // The registry that speaks first (sources/display-order.ts) names the run.
  found.sort((a, b) => sourceRank(a.source) - sourceRank(b.source));
  let merged: CompanySnapshot | null = null;
  for (const f of found) merged = mergeSnapshots(merged, f.snapshot);
  const snapshot = merged!;
  const names = found.map((f) => f.source);
  const date = (deps.clock ?? systemClock).now().toISOString().slice(0, 10);
  const source: RegistrySource = {
    name: names[0]!,
    async *snapshotsForDate() {
      yield snapshot;
    },
  };
  const sourceKey = `import:${names.join('+')}:${wanted.type}:${wanted.value}`;

  try {
    const summary = await runDaily(deps.db, {
      date,
      source,
      sourceKey,
      importIdentifier: wanted,
      batchSize: 1,
      logger: deps.logger,
      signal: deps.signal,
    });
    deps.logger.info({ identifier: wanted, sources: names, new: summary.new, run_id: summary.runId }, 'on-demand import stored');
  } catch (e) {
    if (!(e instanceof RunInProgressError)) throw e;
    // Another process imports this identifier at this moment: its result is ours.
    const deadline = Date.now() + CONCURRENT_IMPORT_WAIT_MS;
    while (Date.now() < deadline) {
      await sleep(200);
      const id = await findCompanyIdByIdentifier(deps.db, wanted);
      if (id) return { found: true, companyId: id };
    }
    throw e;
  }

  const companyId = await findCompanyIdByIdentifier(deps.db, wanted);
  return companyId ? { found: true, companyId } : { found: false };
}
