import { TemporarilyUnavailableError, ValidationError } from '../../lib/errors.ts';
import type { RegistryExecutor } from '../../registry/store.ts';
import type { MatchEngine } from './engine.ts';
import { matchQuery } from './matcher.ts';
import { findMatchDisplayRows } from './repo.ts';
import { MAX_MATCH_QUERIES, type MatchQueryBody, type MatchResult } from './schema.ts';
import { prepareQuery } from './scoring.ts';

/**
 * Batch matching (docs/match.md): each query answered with up to five candidates from the match
 * index, scored, with at most one bet on. Free of HTTP: the route and the MCP tool
 * `match_companies` call `match` alike, and charge through src/modules/wallet/credits.ts.
 */

export interface MatchServiceDeps {
  db: RegistryExecutor;
  engine: MatchEngine;
  /** How long a batch waits for the first build of the index before answering 503. */
  waitForIndexMs?: number;
}

const text = (v: unknown) => typeof v === 'string' && v.trim() !== '';

/** The item's problem the schema cannot say: neither a name nor an identifier. Takes any value. */
function missingNameOrIdentifier(q: unknown, i: number): Record<string, string[]> {
  if (typeof q !== 'object' || q === null || Array.isArray(q)) return {};
  const o = q as Record<string, unknown>;
  return text(o.name) || text(o.nip) || text(o.regon) || text(o.krs)
    ? {}
    : { [`queries.${i}`]: [`The queries item ${i} must have a name or an identifier (nip, regon or krs).`] };
}

/**
 * The checks beyond the schema, on a raw body (a route's `bodyChecks`): run also when the schema
 * refused the body, so a 422 lists every problem (src/http/error-handler.ts leaves out an item
 * the schema already found wrong in one of its fields).
 */
function matchBodyChecks(body: unknown): Record<string, string[]> {
  const queries = (body as { queries?: unknown } | null | undefined)?.queries;
  if (!Array.isArray(queries) || queries.length === 0 || queries.length > MAX_MATCH_QUERIES) return {};
  return Object.assign({}, ...queries.map(missingNameOrIdentifier)) as Record<string, string[]>;
}

function checkQueries(queries: readonly MatchQueryBody[]): void {
  if (queries.length === 0) throw new ValidationError({ queries: ['The queries field must have at least 1 item.'] });
  if (queries.length > MAX_MATCH_QUERIES)
    throw new ValidationError({ queries: [`The queries field must not have more than ${MAX_MATCH_QUERIES} items.`] });
  const errors = matchBodyChecks({ queries });
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
}

export function createMatchService(deps: MatchServiceDeps) {
  const { db, engine } = deps;
  const waitMs = deps.waitForIndexMs ?? 5_000;
  return {
    /** The checks `match` makes before it looks anything up (422): for a caller that prices the batch first. */
    check: checkQueries,
    /** The same checks on a raw body, for a 422 that lists them beside the schema's errors. */
    bodyChecks: matchBodyChecks,
    async match(queries: readonly MatchQueryBody[]): Promise<MatchResult[]> {
      checkQueries(queries);
      const index = await engine.current(waitMs);
      if (index === null) throw new TemporarilyUnavailableError('The match index is being built after a start; try again in a minute.');
      const outcomes = queries.map((q) => matchQuery(index, prepareQuery(q)));
      const display = await findMatchDisplayRows(db, [...new Set(outcomes.flatMap((o) => o.candidates.map((c) => c.candidate.id)))]);
      return outcomes.map((o, queryIndex) => ({
        query_index: queryIndex,
        // A company the index still holds but the database no longer does (never deleted in practice) is left out.
        candidates: o.candidates.flatMap((c, i) => {
          const row = display.get(c.candidate.id);
          return row ? [{ ...row, score: c.score, match: i === o.match, features: c.features }] : [];
        }),
      }));
    },
  };
}

export type MatchService = ReturnType<typeof createMatchService>;
