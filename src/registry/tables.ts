import type { ColumnType, Generated, Kysely } from 'kysely';
import type { EventType, IdentifierType, Severity } from './model.ts';

/** Kysely table shapes of migration 20261121000200_registry; merged into src/db/schema.ts `Database`. */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** bigint comes back from pg as a string. */
type BigIntColumn = ColumnType<string, number | bigint | string, number | bigint | string>;
/** `date` columns: pg returns them as Date by default; the registry pool parses them as YYYY-MM-DD strings. */
type DateColumn = ColumnType<string, string, string>;

export interface CompaniesTable {
  id: Generated<string>;
  primary_identifier_type: 'NIP' | 'REGON9' | 'KRS';
  primary_identifier: string;
  name: string;
  status: 'ACTIVE' | 'SUSPENDED' | 'DELETED';
  snapshot: ColumnType<unknown, string, string>;
  content_hash: Buffer;
  source_fingerprints: ColumnType<Record<string, string>, string, string>;
  revision: Generated<number>;
  name_folded: string;
  city_folded: string | null;
  voivodeship_folded: string | null;
  postal_code: string | null;
  legal_form: string | null;
  activity_codes: ColumnType<string[], string[], string[]>;
  main_activity: string | null;
  activity_start: DateColumn | null;
  has_phone: boolean;
  has_email: boolean;
  has_fax: boolean;
  first_seen_date: DateColumn;
  last_changed_date: DateColumn | null;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

/** One row an identifier: `key` is lib/identifiers.ts identifierKey(type, value). */
export interface CompanyIdentifiersTable {
  key: BigIntColumn;
  company_id: BigIntColumn;
}

export interface EventsTable {
  id: Generated<string>;
  company_id: BigIntColumn;
  event_date: DateColumn;
  /** A PostgreSQL enum: compare with plain parameters, never `::text[]`. */
  event_type: EventType;
  old_value: string | null;
  new_value: string | null;
  severity: Severity;
  run_id: BigIntColumn | null;
  created_at: Generated<Timestamp>;
}

export type DailyRunStatus = 'running' | 'completed' | 'failed';

/** A daily run of a source, or an on-demand import's one-company run (src/registry/import.ts). */
export type DailyRunKind = 'daily' | 'import';

export interface DailyRunsTable {
  id: Generated<string>;
  run_date: DateColumn;
  source: string;
  source_key: string;
  kind: Generated<DailyRunKind>;
  import_identifier_type: IdentifierType | null;
  import_identifier_value: string | null;
  status: DailyRunStatus;
  new_count: Generated<number>;
  updated_count: Generated<number>;
  deleted_count: Generated<number>;
  events_count: Generated<BigIntColumn>;
  processed_count: Generated<BigIntColumn>;
  skipped_count: Generated<number>;
  total: BigIntColumn | null;
  /** Of `total`: the companies the run wrote that were first seen after its date (migration 20261202000100). */
  later_seen: BigIntColumn | null;
  attempts: Generated<number>;
  started_at: Generated<Timestamp>;
  finished_at: Timestamp | null;
  error: string | null;
}

/** The companies one committed batch of a run wrote (migration 20261125000300_daily_run_changes). */
export interface DailyRunChangesTable {
  id: Generated<string>;
  run_id: BigIntColumn;
  company_ids: ColumnType<string[], string[], string[]>;
  created_at: Generated<Timestamp>;
}

export interface RegistryTables {
  companies: CompaniesTable;
  company_identifiers: CompanyIdentifiersTable;
  events: EventsTable;
  daily_runs: DailyRunsTable;
  daily_run_changes: DailyRunChangesTable;
}

export type RegistryDb = Kysely<RegistryTables>;
