import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { compileJsonValidator } from '../../http/ajv.ts';
import { QueryDateSchema } from '../../http/schemas.ts';
import { fieldLabel, validationErrorsFromAjv, withCheckErrors } from '../../http/validation.ts';
import { unstorableTextFields } from '../../lib/storable-text.ts';
import { ValidationError } from '../../lib/errors.ts';
import { EVENT_SCOPES, EVENT_TYPES, IDENTIFIER_TYPES, StringEnum } from '../../registry/model.ts';
import { SearchQuerySchema, SnapshotBodySchema } from '../companies/schema.ts';
import { MatchBodySchema, type MatchQueryBody } from '../match/schema.ts';
import { MAX_IDENTIFIERS, MAX_VALUE_LENGTH } from '../watchlist/identifier-list.ts';

/**
 * The input schemas of the MCP tools (docs/mcp.md), in TypeBox like the REST routes': the JSON
 * Schema a client sees in `tools/list` and the one the arguments are validated against, with the
 * REST routes' 422 messages. Every string is bounded. The low-level SDK `Server` takes JSON Schema
 * as is, so the service keeps one schema language instead of restating each route in zod.
 */

const DryRun = Type.Optional(
  Type.Boolean({ description: 'true: answer what the call would cost (and the balance) without doing it or charging anything.' }),
);
const Page = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number (1-based).' }));
const PerPage = Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items a page, 1 to 100.' }));
const IdentifierType = StringEnum(IDENTIFIER_TYPES, { description: 'NIP, REGON9 or KRS.' });
const IdentifierValues = Type.Array(Type.String({ maxLength: MAX_VALUE_LENGTH }), {
  minItems: 1,
  maxItems: MAX_IDENTIFIERS,
  description: `1 to ${MAX_IDENTIFIERS} identifier values of that type. NIP with or without spaces, dashes or a PL prefix; KRS with or without leading zeros. Duplicates collapse.`,
});
const EventFilters = {
  event_type: Type.Optional(
    Type.String({ maxLength: 1000, description: `One event type or a comma list (any of): ${EVENT_TYPES.join(', ')}.` }),
  ),
  scope: Type.Optional(
    Type.String({
      maxLength: 200,
      description: `An event group or a comma list: ${Object.keys(EVENT_SCOPES).join(', ')}. With event_type, both must match.`,
    }),
  ),
  // As GET /companies/events takes them: an empty value is no bound, and parseEventFilters words a bad date's error.
  from_date: Type.Optional(Type.String({ ...QueryDateSchema, description: 'Events dated on or after (YYYY-MM-DD; empty: no bound).' })),
  to_date: Type.Optional(Type.String({ ...QueryDateSchema, description: 'Events dated on or before (YYYY-MM-DD; empty: no bound).' })),
};

const tool = <P extends TProperties>(properties: P) => Type.Object({ ...properties, dry_run: DryRun });

const { activities: _alias1, open_from: _alias2, page: _page, ...searchFilters } = SearchQuerySchema.properties;

export const SearchCompaniesInput = tool({
  ...searchFilters,
  page: Type.Optional(Type.Integer({ ...SearchQuerySchema.properties.page, default: 1 })),
});
export const GetCompanyInput = tool(SnapshotBodySchema.properties);
export const WatchInput = tool({ identifier_type: IdentifierType, identifier_value: IdentifierValues });
/** What the watch tools validate with ajv: `dry_run`. Their identifier list is the REST body's, checked by parseIdentifierList with its messages and aliases. */
export const WatchValidatedInput = tool({});
export const ListWatchedInput = tool({ page: Page, per_page: PerPage });
export const CompanyEventsInput = tool({
  identifier_type: IdentifierType,
  identifier_value: Type.String({
    minLength: 1,
    maxLength: MAX_VALUE_LENGTH,
    description: 'The identifier value (NIP with or without spaces, dashes or a PL prefix).',
  }),
  ...EventFilters,
  page: Page,
  per_page: PerPage,
});
export const WatchlistEventsInput = tool({
  ...EventFilters,
  page: Page,
  per_page: PerPage,
  after_id: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        "Polling mode: only events with a greater id, oldest first; pass the previous answer's meta.next_after_id to see every event once.",
    }),
  ),
});
export const GetWalletInput = tool({});

export const MatchCompaniesInput = tool({ queries: MatchBodySchema.properties.queries });
export type MatchQueryInput = MatchQueryBody;

/** `identifier_type` in any letter case: the REST routes' preValidation (src/http/identifier-type.ts), for the tools of those routes. */
export { upperCaseIdentifierType } from '../../http/identifier-type.ts';

/** The arguments once validated: defaults filled in (unknown properties are left alone and unused). */
export type Args<T extends TObject> = Static<T>;

const validators = new WeakMap<TObject, ValidateFunction>();

/**
 * Validates a tool's arguments in place; throws the 422 the REST route would (ValidationError):
 * first the text guard's (src/http/text-guard.ts: text PostgreSQL cannot store), then the schema's,
 * with the tool's `checks` beside them (as a route's `bodyChecks`).
 */
export function validateArguments<T extends TObject>(
  schema: T,
  args: unknown,
  checks?: (args: unknown) => Record<string, string[]>,
): Static<T> {
  const value = args ?? {};
  const unstorable = unstorableTextFields(value);
  if (unstorable.length > 0) {
    throw new ValidationError(
      Object.fromEntries(
        unstorable.map((f) => [
          f || 'arguments',
          [`The ${fieldLabel(f || 'arguments')} field must not contain NUL characters or unpaired surrogates.`],
        ]),
      ),
    );
  }
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = compileJsonValidator(schema)));
  if (!validate(value)) throw new ValidationError(withCheckErrors(validationErrorsFromAjv(validate.errors ?? [], 'body'), checks?.(value)));
  return value as Static<T>;
}
