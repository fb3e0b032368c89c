import type { CompanySnapshot } from '../../registry/model.ts';
import { byDisplayOrder } from '../../registry/sources/display-order.ts';
import type { SearchResult } from '../companies/service.ts';
import type { EventRow, FeedEventRow, WatchedRow } from '../watchlist/repo.ts';

/**
 * The short text an agent reads first in a tool's answer (the full data follows as JSON and as
 * structuredContent): one line of counts, then one line an item.
 */

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function pageLine(total: number, one: string, many: string, page: number, lastPage: number): string {
  return `${plural(total, one, many)}${lastPage > 1 ? ` (page ${page} of ${lastPage})` : ''}.`;
}

const ids = (list: readonly { type: string; value: string }[]) => list.map((i) => `${i.type} ${i.value}`).join(', ');

export function searchLines(results: readonly SearchResult[]): string {
  return results
    .map(
      (r) =>
        `\n- ${r.name} (${ids(r.identifiers)}); ${r.city ?? 'no city'}; ${r.status}${r.activity_main ? `; PKD ${r.activity_main}` : ''}`,
    )
    .join('');
}

export function companyLine(snapshot: CompanySnapshot, meta: { last_changed_date: string | null }): string {
  const profiles = byDisplayOrder(snapshot.profiles ?? []);
  const main = profiles[0];
  const a = profiles.find((p) => p.address)?.address;
  const address = a
    ? `${[a.street, a.building].filter(Boolean).join(' ')}${a.apartment ? `/${a.apartment}` : ''}, ${a.postal_code} ${a.city}`.trim()
    : 'no address';
  return [
    `${main?.name ?? 'Unnamed company'} (${ids(snapshot.identity.identifiers)})`,
    `Status: ${main?.status ?? 'unknown'}; legal form: ${main?.legal_form ?? 'unknown'}; address: ${address}.`,
    `Registries: ${profiles.map((p) => p.source).join(', ') || 'none'}; persons: ${snapshot.persons?.length ?? 0}; last change detected: ${meta.last_changed_date ?? 'none'}.`,
  ].join('\n');
}

export function eventLines(events: readonly (EventRow | FeedEventRow)[]): string {
  return events
    .map((e) => {
      const who = 'company_name' in e ? `${e.company_name} (${e.identifier_type} ${e.primary_identifier}): ` : '';
      return `\n- #${e.id} ${e.event_date} ${who}${e.event_type} [${e.severity}]: ${e.old_value ?? '—'} → ${e.new_value ?? '—'}`;
    })
    .join('');
}

export function watchedLines(rows: readonly WatchedRow[]): string {
  return rows
    .map(
      (w) =>
        `\n- ${w.name} (${w.primary_identifier}); watched since ${w.watched_since}; ${plural(w.events_count, 'event')}${w.last_event_at ? `, latest ${w.last_event_at}` : ''}`,
    )
    .join('');
}

/** One answer of the batch matching service (docs/api-contract.md, "Batch matching"), as far as the summary reads it. */
export interface MatchAnswer {
  query_index: number;
  candidates: readonly { identifiers: readonly { type: string; value: string }[]; name: string; score: number; match: boolean }[];
}

export function matchLines(answers: readonly MatchAnswer[]): string {
  const matched = answers.filter((a) => a.candidates.some((c) => c.match)).length;
  return (
    `${matched} of ${plural(answers.length, 'query', 'queries')} matched.` +
    answers
      .map((a) => {
        const best = a.candidates[0];
        if (!best) return `\n- #${a.query_index}: no candidate`;
        return `\n- #${a.query_index}: ${best.match ? 'match' : 'best guess'} ${best.name} (${ids(best.identifiers)}), score ${best.score}`;
      })
      .join('')
  );
}
