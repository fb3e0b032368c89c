import { ValidationError } from '../../lib/errors.ts';
import { isIsoDate } from '../../lib/dates.ts';
import { EVENT_SCOPES, EVENT_TYPES, type EventScope, type EventType } from '../../registry/model.ts';

/** The filters both event feeds take (docs/watchlist.md, "Feeds"), as the query string gives them. */
export interface EventFilterQuery {
  /** One value, a comma list, or the parameter repeated (each item may be a comma list too). */
  event_type?: string | readonly string[];
  scope?: string | readonly string[];
  from_date?: string;
  to_date?: string;
}

export interface EventFilters {
  /** null: every type. Empty: nothing can match (e.g. a type outside the requested scope). */
  types: EventType[] | null;
  fromDate: string | null;
  toDate: string | null;
}

const SCOPES = Object.keys(EVENT_SCOPES) as EventScope[];

function commaList(raw: string | readonly string[]): string[] {
  const items = typeof raw === 'string' ? [raw] : raw;
  return items
    .flatMap((item) => item.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * `event_type` is one type or a comma list; `scope` is an event group (a comma list of groups
 * is accepted too); given both, an event must satisfy both. Dates are inclusive, YYYY-MM-DD.
 */
export function parseEventFilters(q: EventFilterQuery): EventFilters {
  const errors: Record<string, string[]> = {};
  const fail = (key: string, text: string) => (errors[key] ??= []).push(text);

  let types: Set<EventType> | null = null;
  const requestedTypes = q.event_type === undefined ? [] : commaList(q.event_type);
  if (requestedTypes.length > 0) {
    const requested = requestedTypes.map((s) => s.toUpperCase());
    const unknown = requested.filter((s) => !(EVENT_TYPES as readonly string[]).includes(s));
    if (unknown.length > 0) fail('event_type', `The selected event type is invalid: ${unknown.slice(0, 5).join(', ')}.`);
    else types = new Set(requested as EventType[]);
  }
  const requestedScopes = q.scope === undefined ? [] : commaList(q.scope);
  if (requestedScopes.length > 0) {
    const requested = requestedScopes.map((s) => s.toLowerCase());
    const unknown = requested.filter((s) => !(SCOPES as string[]).includes(s));
    if (unknown.length > 0) fail('scope', `The selected scope is invalid. Use one of ${SCOPES.join(', ')}.`);
    else {
      const inScope = new Set(requested.flatMap((s) => EVENT_SCOPES[s as EventScope]));
      types = new Set(types === null ? inScope : [...types].filter((t) => inScope.has(t)));
    }
  }
  const date = (key: 'from_date' | 'to_date'): string | null => {
    const v = q[key];
    if (v === undefined || v === '') return null;
    if (!isIsoDate(v)) {
      fail(key, `The ${key.replace('_', ' ')} field must be a valid date in the format YYYY-MM-DD.`);
      return null;
    }
    return v;
  };
  const fromDate = date('from_date');
  const toDate = date('to_date');
  if (fromDate !== null && toDate !== null && toDate < fromDate)
    fail('to_date', 'The to date field must be a date after or equal to from date.');

  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  return { types: types === null ? null : EVENT_TYPES.filter((t) => types!.has(t)), fromDate, toDate };
}
