import { sql, type Kysely } from 'kysely';

// Migrations never import app code: they describe the schema as it was on their day.
// docs/registry.md explains each choice (partitioning, index set, enum types).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE companies (
      id bigserial PRIMARY KEY,
      primary_identifier_type text NOT NULL CHECK (primary_identifier_type IN ('NIP', 'REGON9', 'KRS')),
      primary_identifier text NOT NULL,
      name text NOT NULL,
      status text NOT NULL CHECK (status IN ('ACTIVE', 'SUSPENDED', 'DELETED')),
      snapshot json NOT NULL,
      -- Hash of the stored snapshot's canonical JSON: an unchanged merge is detected without a diff.
      content_hash bytea NOT NULL,
      -- Per source, the fingerprint of the last snapshot it delivered: an identical delivery is
      -- skipped without loading, parsing or merging the stored snapshot.
      source_fingerprints jsonb NOT NULL DEFAULT '{}',
      -- Optimistic concurrency: a writer updates only the revision it read.
      revision integer NOT NULL DEFAULT 1,
      -- Denormalised search columns, derived from the snapshot on every write.
      name_folded text NOT NULL,
      city_folded text,
      voivodeship_folded text,
      postal_code text,
      legal_form text,
      activity_codes text[] NOT NULL DEFAULT '{}',
      main_activity text,
      activity_start date,
      has_phone boolean NOT NULL DEFAULT false,
      has_email boolean NOT NULL DEFAULT false,
      has_fax boolean NOT NULL DEFAULT false,
      first_seen_date date NOT NULL,
      -- Date of the last daily run that recorded an event for the company.
      last_changed_date date,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    ) WITH (fillfactor = 85);
    -- Room on each page lets a day's update stay a HOT update (no new index entries) whenever no
    -- indexed column changed, which is most of them.
    CREATE INDEX companies_activity_codes_idx ON companies USING gin (activity_codes);
    -- "Companies known at the end of day D" for the statistics: an index-only count.
    CREATE INDEX companies_first_seen_idx ON companies (first_seen_date);

    -- company_id and events.company_id are not declared foreign keys: only src/registry/store.ts
    -- writes these tables, always in the transaction that writes the company, and companies are
    -- never deleted. A declared key fires a row trigger with a lookup per identifier and per
    -- event, measured at about a sixth of PostgreSQL's work on the load path (docs/registry.md).
    -- Both columns are indexed as if they were keys.
    CREATE TABLE company_identifiers (
      type text NOT NULL CHECK (type IN ('NIP', 'REGON9', 'KRS')),
      value text NOT NULL,
      company_id bigint NOT NULL,
      PRIMARY KEY (type, value)
    );
    CREATE INDEX company_identifiers_company_idx ON company_identifiers (company_id);

    CREATE TABLE daily_runs (
      id bigserial PRIMARY KEY,
      run_date date NOT NULL,
      -- The source's name (krs, bir, ceidg, vat, synthetic, file) ...
      source text NOT NULL,
      -- ... and what identifies its input: 'krs', 'synthetic:7', 'file:/abs/path.ndjson'.
      source_key text NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
      new_count integer NOT NULL DEFAULT 0,
      updated_count integer NOT NULL DEFAULT 0,
      deleted_count integer NOT NULL DEFAULT 0,
      events_count bigint NOT NULL DEFAULT 0,
      processed_count bigint NOT NULL DEFAULT 0,
      skipped_count integer NOT NULL DEFAULT 0,
      total bigint,
      attempts integer NOT NULL DEFAULT 1,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      error text,
      UNIQUE (run_date, source_key)
    );

    -- 4 bytes a row instead of a 20-30 character text on the largest table.
    CREATE TYPE event_type AS ENUM (
      'COMPANY_NAME_CHANGED', 'COMPANY_LEGAL_FORM_CHANGED', 'COMPANY_TAX_IDENTITY_CHANGED',
      'COMPANY_REGISTERED_ADDRESS_ADDED', 'COMPANY_REGISTERED_ADDRESS_CHANGED',
      'COMPANY_ACTIVITIES_ADDED', 'COMPANY_ACTIVITIES_REMOVED', 'COMPANY_ACTIVITIES_CHANGED',
      'COMPANY_MAIN_ACTIVITY_CHANGED',
      'COMPANY_SUSPENDED_DATE', 'COMPANY_RESUMPTION_DATE', 'COMPANY_CLOSED_DATE',
      'COMPANY_START_DATE_CHANGE', 'COMPANY_STATUS_CHANGED',
      'COMPANY_BANKRUPTCY_STARTED', 'COMPANY_BANKRUPTCY_ENDED',
      'COMPANY_LIQUIDATION_STARTED', 'COMPANY_LIQUIDATION_ENDED',
      'COMPANY_RESTRUCTURING_STARTED', 'COMPANY_RESTRUCTURING_ENDED',
      'COMPANY_EMAIL_CHANGED', 'COMPANY_PHONE_CHANGED', 'COMPANY_WEBSITE_CHANGED',
      'COMPANY_UNIT_OPENED', 'COMPANY_UNIT_CLOSED',
      'COMPANY_PERSON_ADDED', 'COMPANY_PERSON_REMOVED',
      'COMPANY_VAT_STATUS_CHANGED', 'COMPANY_BANK_ACCOUNTS_CHANGED'
    );
    CREATE TYPE event_severity AS ENUM ('info', 'warning', 'critical');

    -- Monthly range partitions on event_date, created on demand by the writer
    -- (ensure_events_partition); the default partition only catches a writer that forgot.
    CREATE TABLE events (
      id bigserial NOT NULL,
      company_id bigint NOT NULL,
      event_date date NOT NULL,
      event_type event_type NOT NULL,
      old_value text,
      new_value text,
      severity event_severity NOT NULL,
      -- Not a foreign key on purpose: runs are never deleted, and a fourth index on the largest
      -- table only to serve ON DELETE of a run would cost every insert.
      run_id bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (event_date, id)
    ) PARTITION BY RANGE (event_date);
    -- A company's events newest first (event_date, id).
    CREATE INDEX events_company_idx ON events (company_id, event_date, id);
    CREATE TABLE events_default PARTITION OF events DEFAULT;

    CREATE FUNCTION ensure_events_partition(d date) RETURNS text LANGUAGE plpgsql AS $fn$
    DECLARE
      month_start date := date_trunc('month', d)::date;
      part text := format('events_y%sm%s', to_char(month_start, 'YYYY'), to_char(month_start, 'MM'));
    BEGIN
      IF to_regclass(part) IS NOT NULL THEN
        RETURN part;
      END IF;
      BEGIN
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
          part, month_start, (month_start + interval '1 month')::date);
      EXCEPTION
        -- Rows for that month already sit in the default partition: they stay there.
        WHEN check_violation THEN RETURN 'events_default';
        -- A concurrent writer created it first.
        WHEN duplicate_table OR unique_violation THEN RETURN part;
      END;
      RETURN part;
    END
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION ensure_events_partition(date);
    DROP TABLE events, daily_runs, company_identifiers, companies;
    DROP TYPE event_type, event_severity;
  `.execute(db);
}
