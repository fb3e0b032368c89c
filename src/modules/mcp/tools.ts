import type { Static, TObject } from '@sinclair/typebox';
import type { PriceKey } from '../../config.ts';
import { ValidationError } from '../../lib/errors.ts';
import { parseIdentifier } from '../../lib/identifiers.ts';
import type { IdentifierType } from '../../registry/model.ts';
import { parseSearchQuery, searchQueryErrors } from '../companies/filters.ts';
import type { CompaniesService } from '../companies/service.ts';
import type { WalletService } from '../wallet/service.ts';
import { parseEventFilters } from '../watchlist/event-filters.ts';
import { parseCompanyEventsQuery, type EventsService } from '../watchlist/feed.ts';
import { parseIdentifierList } from '../watchlist/identifier-list.ts';
import { addMessage, type WatchlistService } from '../watchlist/service.ts';
import {
  CompanyEventsInput,
  GetCompanyInput,
  GetWalletInput,
  ListWatchedInput,
  MatchCompaniesInput,
  SearchCompaniesInput,
  WatchInput,
  WatchValidatedInput,
  WatchlistEventsInput,
  upperCaseIdentifierType,
  type MatchQueryInput,
} from './schema.ts';
import { companyLine, eventLines, matchLines, pageLine, plural, searchLines, watchedLines, type MatchAnswer } from './summaries.ts';

/**
 * The nine MCP tools (docs/mcp.md). Each calls the service its REST route calls (no HTTP
 * loop-back) and sells the same operation at the same price; src/modules/mcp/server.ts does the
 * charging, `dry_run` and the errors, the way src/http/pricing.ts does for the routes.
 */

/** Batch matching (src/modules/match/): optional, the tool exists only when the service is passed in. */
export interface MatchService {
  /** Throws the ValidationError `match` would (a query without a name or an identifier). */
  check(queries: readonly MatchQueryInput[]): void;
  /** The same checks on raw arguments, reported beside the schema's errors. */
  bodyChecks?(args: unknown): Record<string, string[]>;
  match(queries: readonly MatchQueryInput[]): Promise<readonly MatchAnswer[]>;
}

export interface McpServices {
  companies: CompaniesService;
  watchlist: WatchlistService;
  events: EventsService;
  wallet: Pick<WalletService, 'getWallet'>;
  match?: { service: MatchService; operation: PriceKey };
}

export interface ToolContext {
  accountId: string;
}

/** What a call answers: `structured` becomes structuredContent, `summary` the text an agent reads first. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  summary: string;
}

export interface ToolPrice {
  operation: PriceKey;
  /** `call`: charged after the call succeeds (like a REST route); `service`: the service charges in its own transaction. */
  chargedBy: 'call' | 'service';
  /** How the price counts, after "N credit(s)": e.g. "per call". */
  unit: string;
}

export interface Tool<S extends TObject = TObject> {
  readonly name: string;
  readonly title: string;
  /** What it does; the price sentence is appended from the configured prices. */
  readonly description: string;
  readonly input: S;
  /**
   * The schema the arguments are validated against when it is not `input` (which `tools/list`
   * shows): the watch tools check only `dry_run` there and leave the identifier list to the REST
   * routes' parser, as those routes attach ajv's verdict instead of answering with it.
   */
  readonly validatedInput?: TObject;
  /** Puts the arguments right before they are validated, as the REST route's preValidation hook (identifier_type in any case). */
  readonly preValidation?: (args: unknown) => void;
  /** Checks beyond the input schema, reported beside its errors (a route's `bodyChecks`). */
  readonly checks?: (args: unknown) => Record<string, string[]>;
  readonly readOnly: boolean;
  /** It may reach outside the service (the live registries): MCP's `openWorldHint`. */
  readonly openWorld?: boolean;
  /** It takes something away (a company off the watchlist): MCP's `destructiveHint`. */
  readonly destructive?: boolean;
  /** The operation it sells; absent: free. */
  readonly price?: ToolPrice;
  /** Units a `call`-charged call takes, known from its arguments (default 1): the balance check and the charge cover them all, as the route's `unitsOf`. */
  unitsOf?(args: Static<S>): number;
  /** With a schema error in the arguments: those errors and the value checks of the rest, as its REST route reports them at once. */
  withValueErrors?(args: Record<string, unknown>, schemaErrors: Record<string, string[]>): Record<string, string[]>;
  /** Checks the arguments as the call would and counts the units it would charge (dry_run). */
  quote(args: Static<S>, ctx: ToolContext): Promise<{ units: number; detail?: Record<string, unknown> }>;
  run(args: Static<S>, ctx: ToolContext): Promise<ToolAnswer>;
}

const PER_CALL = (operation: PriceKey): ToolPrice => ({ operation, chargedBy: 'call', unit: 'per successful call' });
const free = async () => ({ units: 0 });

function checkIdentifier(type: IdentifierType, value: string): void {
  const parsed = parseIdentifier(type, value);
  if (!parsed.ok) throw new ValidationError({ identifier_value: [parsed.error] });
}

/** The REST parser's errors of a watch tool's identifier list, said beside a bad `dry_run`. */
function identifierListErrors(args: unknown): Record<string, string[]> {
  try {
    parseIdentifierList(args);
    return {};
  } catch (e) {
    if (e instanceof ValidationError) return e.errors;
    throw e;
  }
}

function withoutDryRun<T extends { dry_run?: boolean }>(args: T): Omit<T, 'dry_run'> {
  const { dry_run: _dryRun, ...rest } = args;
  return rest;
}

export function createTools(services: McpServices): Tool[] {
  const { companies, watchlist, events, wallet } = services;

  const searchCompanies: Tool<typeof SearchCompaniesInput> = {
    name: 'search_companies',
    title: 'Search Polish companies',
    readOnly: true,
    input: SearchCompaniesInput,
    description:
      'Search the Polish business registries (KRS, REGON/BIR, CEIDG) by name words (`q`), city, voivodeship, postal code, activity (PKD) code or prefix, legal form, contact type and activity start dates. ' +
      'All filters are optional and combine; status defaults to ACTIVE. 20 results a page, newest activity start first.',
    price: PER_CALL('companies.search'),
    withValueErrors: (args, schemaErrors) => searchQueryErrors(withoutDryRun(args), schemaErrors),
    quote: async (args) => {
      parseSearchQuery(withoutDryRun(args));
      return { units: 1 };
    },
    run: async (args) => {
      const r = await companies.search(withoutDryRun(args));
      const d = r.data;
      return {
        structured: r,
        summary: `${pageLine(d.total, 'company', 'companies', d.current_page, d.last_page)}${searchLines(d.results)}`,
      };
    },
  };

  const getCompany: Tool<typeof GetCompanyInput> = {
    name: 'get_company',
    title: 'Company profile',
    readOnly: true,
    openWorld: true,
    input: GetCompanyInput,
    preValidation: upperCaseIdentifierType,
    description:
      'The full profile of one company by NIP, REGON9 or KRS: names, identifiers, one profile per registry (status, legal form, address, activities, dates, contacts, VAT status, bank accounts) and persons. ' +
      'A company the service does not hold yet is looked up in the live registries first.',
    price: PER_CALL('companies.snapshot'),
    quote: async (args) => {
      checkIdentifier(args.identifier_type, args.identifier_value);
      return { units: 1 };
    },
    run: async (args) => {
      const r = await companies.snapshot(args.identifier_type, args.identifier_value);
      return { structured: r, summary: companyLine(r.data, r.meta) };
    },
  };

  const watchCompanies: Tool<typeof WatchInput> = {
    name: 'watch_companies',
    title: 'Watch companies',
    readOnly: false,
    openWorld: true,
    input: WatchInput,
    validatedInput: WatchValidatedInput,
    checks: identifierListErrors,
    description:
      "Add companies to the account's watchlist, so that their registry changes appear in `watchlist_events` (and webhooks). Asynchronous: known companies are watched within moments, unknown ones after a lookup in the live registries; " +
      'an e-mail confirms which identifiers are watched.',
    price: {
      operation: 'companies.add',
      chargedBy: 'service',
      unit: 'per identifier newly queued (already watched or queued ones are free; one not found in any registry is refunded)',
    },
    quote: async (args, ctx) => {
      const quote = await watchlist.quoteAdd(ctx.accountId, parseIdentifierList(args));
      return { units: quote.queued, detail: { ...quote } };
    },
    run: async (args, ctx) => {
      const { balanceAfter, ...r } = await watchlist.add(ctx.accountId, parseIdentifierList(args));
      const message = addMessage(r);
      return {
        structured: { success: true, message, ...r },
        summary: `${message}\nRequest ${r.request_id}${r.duplicates > 0 ? `; ${plural(r.duplicates, 'duplicate')} collapsed` : ''}.`,
      };
    },
  };

  const unwatchCompanies: Tool<typeof WatchInput> = {
    name: 'unwatch_companies',
    title: 'Stop watching companies',
    readOnly: false,
    destructive: true,
    input: WatchInput,
    validatedInput: WatchValidatedInput,
    checks: identifierListErrors,
    description:
      'Remove companies from the watchlist; monitoring stops at once. Each value ends in `removed`, `not_watched` (a known company not on the list) or `not_found` (no such company).',
    quote: async (args) => {
      parseIdentifierList(args);
      return { units: 0 };
    },
    run: async (args, ctx) => {
      const r = await watchlist.remove(ctx.accountId, parseIdentifierList(args));
      return {
        structured: {
          success: true,
          data: { removed: r.removed, not_found: r.not_found, not_watched: r.not_watched },
          meta: {
            total: r.removed.length + r.not_found.length + r.not_watched.length,
            removed: r.removed.length,
            not_found: r.not_found.length,
            not_watched: r.not_watched.length,
            removed_at: r.removed_at,
          },
        },
        summary:
          `Removed ${r.removed.length}; not watched ${r.not_watched.length}; not found ${r.not_found.length}.` +
          (r.removed.length > 0 ? `\nRemoved: ${r.removed.join(', ')}` : '') +
          (r.not_watched.length > 0 ? `\nNot watched: ${r.not_watched.join(', ')}` : '') +
          (r.not_found.length > 0 ? `\nNot found: ${r.not_found.join(', ')}` : ''),
      };
    },
  };

  const listWatched: Tool<typeof ListWatchedInput> = {
    name: 'list_watched',
    title: 'Watched companies',
    readOnly: true,
    input: ListWatchedInput,
    description:
      'The companies on the watchlist, newest watch first, with how many events the feed shows for each and the date of the latest.',
    quote: free,
    run: async (args, ctx) => {
      const page = args.page ?? 1;
      const { data, meta } = await watchlist.listWatched(ctx.accountId, page, args.per_page ?? 20);
      return {
        structured: { success: true, data, meta },
        summary: `${pageLine(meta.total, 'watched company', 'watched companies', meta.current_page, meta.last_page)}${watchedLines(data)}`,
      };
    },
  };

  const companyEvents: Tool<typeof CompanyEventsInput> = {
    name: 'company_events',
    title: "A company's registry changes",
    readOnly: true,
    openWorld: true,
    input: CompanyEventsInput,
    preValidation: upperCaseIdentifierType,
    description:
      'Every change detected in the registries for one company (watched or not), newest first: name, address, activities, status, insolvency, contacts, persons, tax. Filter by event type, scope and dates.',
    price: PER_CALL('companies.events'),
    quote: async (args) => {
      parseCompanyEventsQuery(args);
      return { units: 1 };
    },
    run: async (args) => {
      const r = await events.companyEvents({ ...withoutDryRun(args), page: args.page ?? 1, per_page: args.per_page ?? 20 });
      const { company, events: list } = r.data;
      return {
        structured: { status: 'success', data: r.data, meta: r.meta },
        summary: `${company.name} (${company.identifier_type} ${company.primary_identifier}): ${pageLine(r.meta.total, 'event', 'events', r.meta.current_page, r.meta.last_page)}${eventLines(list)}`,
      };
    },
  };

  const watchlistEvents: Tool<typeof WatchlistEventsInput> = {
    name: 'watchlist_events',
    title: 'Changes of the watched companies',
    readOnly: true,
    input: WatchlistEventsInput,
    description:
      'The feed: registry changes of the watched companies, from the day each was watched. By default newest first, page-numbered; with `after_id`, the events after that id, oldest first, ' +
      'so that an agent polling with `meta.next_after_id` sees every event exactly once.',
    price: PER_CALL('watchlist.events'),
    quote: async (args) => {
      parseEventFilters(args);
      return { units: 1 };
    },
    run: async (args, ctx) => {
      const r = await events.feed(ctx.accountId, { ...withoutDryRun(args), page: args.page ?? 1, per_page: args.per_page ?? 20 });
      const head =
        'after_id' in r.meta
          ? `${plural(r.data.length, 'event')} after id ${r.meta.after_id}${r.meta.has_more ? ' (more follow)' : ''}; next after_id: ${r.meta.next_after_id}.`
          : pageLine(r.meta.total, 'event', 'events', r.meta.current_page, r.meta.last_page);
      return { structured: { status: 'success', data: r.data, meta: r.meta }, summary: `${head}${eventLines(r.data)}` };
    },
  };

  const getWallet: Tool<typeof GetWalletInput> = {
    name: 'get_wallet',
    title: 'Credit balance',
    readOnly: true,
    input: GetWalletInput,
    description: "The account's credit balance and the credits purchased to date.",
    quote: free,
    run: async (_args, ctx) => {
      const data = await wallet.getWallet(ctx.accountId);
      return {
        structured: { status: 'success', data },
        summary: `Balance: ${plural(data.balance, 'credit')} (purchased to date: ${data.total_purchased}).`,
      };
    },
  };

  const tools: Tool[] = [searchCompanies, getCompany] as Tool[];
  if (services.match) {
    const { service, operation } = services.match;
    const matchCompanies: Tool<typeof MatchCompaniesInput> = {
      name: 'match_companies',
      title: 'Match records to companies',
      readOnly: true,
      input: MatchCompaniesInput,
      checks: service.bodyChecks,
      description:
        'Entity resolution: for each of up to 100 records (a name and/or NIP, REGON, KRS, with city, postal code, street), up to 5 candidate companies, best first, with a score from 0 to 1 ' +
        'and `match: true` on the one candidate the service would bet on. Names match ignoring case, diacritics, punctuation and legal-form words.',
      price: { operation, chargedBy: 'call', unit: 'per query' },
      unitsOf: (args) => args.queries.length,
      quote: async (args) => {
        service.check(args.queries);
        return { units: args.queries.length };
      },
      run: async (args) => {
        const data = await service.match(args.queries);
        return { structured: { status: 'success', data }, summary: matchLines(data) };
      },
    };
    tools.push(matchCompanies as Tool);
  }
  tools.push(...([watchCompanies, unwatchCompanies, listWatched, companyEvents, watchlistEvents, getWallet] as Tool[]));
  return tools;
}
