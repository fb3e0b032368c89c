import { sql, type Kysely } from 'kysely';

// Import runs are marked by a column, not by their source key. An on-demand import
// (src/registry/import.ts) stores its company through an ordinary run; `kind` says it was one and
// `import_identifier_type`/`_value` which identifier it was for, so that statistics and metrics
// leave imports out and the search index refreshes the one company without parsing the key. The
// key (`import:<sources>:<TYPE>:<VALUE>`) stays as the run's name. docs/registry.md, "Data model".
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE daily_runs
      ADD COLUMN kind text NOT NULL DEFAULT 'daily' CHECK (kind IN ('daily', 'import')),
      ADD COLUMN import_identifier_type text CHECK (import_identifier_type IN ('NIP', 'REGON9', 'KRS')),
      ADD COLUMN import_identifier_value text,
      ADD CONSTRAINT daily_runs_import_identifier_check CHECK (
        (import_identifier_type IS NULL) = (import_identifier_value IS NULL) AND (kind = 'import' OR import_identifier_type IS NULL));
    UPDATE daily_runs SET kind = 'import',
      import_identifier_type = substring(source_key FROM '^import:[^:]*:(NIP|REGON9|KRS):[0-9]{1,14}$'),
      import_identifier_value = substring(source_key FROM '^import:[^:]*:(?:NIP|REGON9|KRS):([0-9]{1,14})$')
    WHERE source_key LIKE 'import:%';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Nothing to carry back: every import run's key still names it.
  await sql`
    ALTER TABLE daily_runs DROP CONSTRAINT daily_runs_import_identifier_check,
      DROP COLUMN import_identifier_value, DROP COLUMN import_identifier_type, DROP COLUMN kind;
  `.execute(db);
}
