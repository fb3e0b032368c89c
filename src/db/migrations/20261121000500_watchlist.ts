import { sql, type Kysely } from 'kysely';

// Migrations never import app code: they describe the schema as it was on their day.
// docs/watchlist.md explains the design (the materialised feed, the events writer lock, the
// after_id ordering argument).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- One POST /companies/add: what was asked, what it cost, and when every company of it settled.
    CREATE TABLE watch_requests (
      id bigserial PRIMARY KEY,
      request_ref text NOT NULL UNIQUE,
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      identifier_type text NOT NULL CHECK (identifier_type IN ('NIP', 'REGON9', 'KRS')),
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'completed')),
      submitted_count integer NOT NULL,
      queued_count integer NOT NULL,
      charged_credits integer NOT NULL,
      refunded_credits integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      CHECK ((status = 'completed') = (completed_at IS NOT NULL))
    );
    CREATE INDEX watch_requests_account_idx ON watch_requests (account_id, id);
    -- The add job looks for the account's open requests (a value queued twice is charged once).
    CREATE INDEX watch_requests_open_idx ON watch_requests (account_id) WHERE status = 'queued';

    -- One distinct identifier of a request; 'queued' until the job settles it.
    CREATE TABLE watch_request_items (
      request_id bigint NOT NULL REFERENCES watch_requests(id) ON DELETE CASCADE,
      position integer NOT NULL,
      identifier_value text NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'watched', 'already_watched', 'already_queued', 'not_found')),
      -- Charged when the request was taken (newly queued); refunded unless it ends 'watched'.
      charged boolean NOT NULL,
      company_id bigint REFERENCES companies(id),
      settled_at timestamptz,
      PRIMARY KEY (request_id, position),
      UNIQUE (request_id, identifier_value),
      CHECK ((status = 'queued') = (settled_at IS NULL))
    );
    CREATE INDEX watch_request_items_company_idx ON watch_request_items (company_id);

    -- An account's watched companies. A removed company keeps its row (removed_at set) so a
    -- second add is a new watch of the same row.
    CREATE TABLE watchlist (
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      company_id bigint NOT NULL REFERENCES companies(id),
      watched_since timestamptz NOT NULL,
      -- The UTC day of watched_since: the first event_date the feed shows.
      watched_date date NOT NULL,
      removed_at timestamptz,
      PRIMARY KEY (account_id, company_id)
    );
    -- The fan-out's probe per new event, and the foreign key's.
    CREATE INDEX watchlist_company_idx ON watchlist (company_id);
    -- GET /companies/watched: newest watched_since first.
    CREATE INDEX watchlist_account_since_idx ON watchlist (account_id, watched_since DESC, company_id DESC) WHERE removed_at IS NULL;

    -- The feed, materialised: one row per (account, event) the account's feed shows. Written by
    -- the fan-out trigger below in the event writer's transaction, and by an add (the company's
    -- events from its watched day on) or a removal (its rows go) under the same lock. Reading a
    -- feed is then a range of one index whatever the size of events; counting it is an
    -- index-only count of the account's own rows. event_id/company_id are not foreign keys, as
    -- in the registry's own tables: events are partitioned and never deleted.
    CREATE TABLE watchlist_feed (
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      event_id bigint NOT NULL,
      event_date date NOT NULL,
      company_id bigint NOT NULL,
      event_type event_type NOT NULL,
      PRIMARY KEY (account_id, event_id)
    );
    -- Page mode: newest first (event_date, then id), filters on type and dates index-only.
    CREATE INDEX watchlist_feed_page_idx ON watchlist_feed (account_id, event_date DESC, event_id DESC) INCLUDE (event_type);
    -- A company's rows of one feed: removal, and events_count / last_event_at of the watched list.
    CREATE INDEX watchlist_feed_company_idx ON watchlist_feed (account_id, company_id, event_date);

    -- How many feed rows an account has per day and type, kept with the rows (same statements,
    -- same lock): a feed's total under any filter is a sum over at most days x types rows
    -- instead of a count over every event of the feed.
    CREATE TABLE watchlist_feed_counts (
      account_id bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      event_date date NOT NULL,
      event_type event_type NOT NULL,
      n integer NOT NULL CHECK (n >= 0),
      -- n in the index: a total is an index-only scan (the rows of one account are spread over
      -- as many heap pages as it has days, interleaved with every other account's).
      PRIMARY KEY (account_id, event_date, event_type) INCLUDE (n)
    );

    -- Every statement that inserts events takes the events writer lock (src/registry/store.ts
    -- EVENTS_WRITER_LOCK = 7307900001) before its first id is drawn: a BEFORE STATEMENT trigger
    -- runs before any row's default (nextval) is evaluated. Writers already take it; this makes it
    -- hold for any writer, so event-writing transactions run one at a time and their ids become
    -- visible in id order. The advisory lock is re-entrant within a transaction.
    CREATE FUNCTION events_take_writer_lock() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM pg_advisory_xact_lock(7307900001);
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER events_take_writer_lock BEFORE INSERT ON events
      FOR EACH STATEMENT EXECUTE FUNCTION events_take_writer_lock();

    -- The fan-out: new events of watched companies, dated from the watch's first day, enter the
    -- watching accounts' feeds in the writer's own transaction (one statement per insert).
    CREATE FUNCTION watchlist_feed_fan_out() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      WITH fed AS (
        INSERT INTO watchlist_feed (account_id, event_id, event_date, company_id, event_type)
        SELECT w.account_id, n.id, n.event_date, n.company_id, n.event_type
        FROM new_events n JOIN watchlist w ON w.company_id = n.company_id
        WHERE w.removed_at IS NULL AND n.event_date >= w.watched_date
        RETURNING account_id, event_date, event_type
      )
      INSERT INTO watchlist_feed_counts (account_id, event_date, event_type, n)
      SELECT account_id, event_date, event_type, count(*) FROM fed GROUP BY 1, 2, 3
      ON CONFLICT (account_id, event_date, event_type) DO UPDATE SET n = watchlist_feed_counts.n + EXCLUDED.n;
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER events_watchlist_fan_out AFTER INSERT ON events
      REFERENCING NEW TABLE AS new_events
      FOR EACH STATEMENT EXECUTE FUNCTION watchlist_feed_fan_out();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER events_watchlist_fan_out ON events;
    DROP TRIGGER events_take_writer_lock ON events;
    DROP FUNCTION watchlist_feed_fan_out();
    DROP FUNCTION events_take_writer_lock();
    DROP TABLE watchlist_feed_counts, watchlist_feed, watchlist, watch_request_items, watch_requests;
  `.execute(db);
}
