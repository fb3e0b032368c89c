import { sql, type Kysely } from 'kysely';

// company_identifiers is keyed by one bigint instead of (type, value) text: the type's code times
// 10^10 plus the value's digits (NIP 1, REGON9 2, KRS 3; every stored value is 9 or 10 digits).
// A first load inserts about three identifiers a company and a day's run probes them for every
// line; the text key's B-tree took half as long again per entry and a third more space
// (docs/benchmarks-history.md, "no data checksums, a bigint identifier key, a fairer start"). The three functions below are the mapping in SQL; the
// service computes the same key in src/lib/identifiers.ts (identifierKey), and docs/registry.md
// shows how to query by hand.
//
// On 12.3 million identifiers (4.1 million companies) it took 47 s, the table locked throughout
// (and 976 MB against 1,394 before): a day's run waits for it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION identifier_key(type text, value text) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT (CASE type WHEN 'NIP' THEN 1 WHEN 'REGON9' THEN 2 WHEN 'KRS' THEN 3 END) * 10000000000 + value::bigint $$;
    CREATE FUNCTION identifier_type(key bigint) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT CASE key / 10000000000 WHEN 1 THEN 'NIP' WHEN 2 THEN 'REGON9' WHEN 3 THEN 'KRS' END $$;
    CREATE FUNCTION identifier_value(key bigint) RETURNS text
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS $$ SELECT lpad((key % 10000000000)::text, CASE key / 10000000000 WHEN 2 THEN 9 ELSE 10 END, '0') $$;

    ALTER TABLE company_identifiers RENAME TO company_identifiers_by_text;
    ALTER INDEX company_identifiers_pkey RENAME TO company_identifiers_by_text_pkey;
    -- Absent while a first load that a crash interrupted still has it deferred (deferred-indexes.ts).
    ALTER INDEX IF EXISTS company_identifiers_company_idx RENAME TO company_identifiers_by_text_company_idx;
    CREATE TABLE company_identifiers (
      key bigint NOT NULL CHECK (key >= 10000000000 AND key < 40000000000),
      company_id bigint NOT NULL
    );
    INSERT INTO company_identifiers (key, company_id)
      SELECT identifier_key(type, value), company_id FROM company_identifiers_by_text ORDER BY 1;
    ALTER TABLE company_identifiers ADD CONSTRAINT company_identifiers_pkey PRIMARY KEY (key);
    CREATE INDEX company_identifiers_company_idx ON company_identifiers (company_id);
    DROP TABLE company_identifiers_by_text;
    ANALYZE company_identifiers;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE company_identifiers RENAME TO company_identifiers_by_key;
    ALTER INDEX company_identifiers_pkey RENAME TO company_identifiers_by_key_pkey;
    ALTER INDEX IF EXISTS company_identifiers_company_idx RENAME TO company_identifiers_by_key_company_idx;
    CREATE TABLE company_identifiers (
      type text NOT NULL CHECK (type IN ('NIP', 'REGON9', 'KRS')),
      value text NOT NULL,
      company_id bigint NOT NULL
    );
    INSERT INTO company_identifiers (type, value, company_id)
      SELECT identifier_type(key), identifier_value(key), company_id FROM company_identifiers_by_key ORDER BY key;
    ALTER TABLE company_identifiers ADD CONSTRAINT company_identifiers_pkey PRIMARY KEY (type, value);
    CREATE INDEX company_identifiers_company_idx ON company_identifiers (company_id);
    DROP TABLE company_identifiers_by_key;
    DROP FUNCTION identifier_key(text, text);
    DROP FUNCTION identifier_type(bigint);
    DROP FUNCTION identifier_value(bigint);
  `.execute(db);
}
